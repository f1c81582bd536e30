package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

// AssistantName is the name of the assistant graph.
const AssistantName = "assistant"

// AssistantPrompt is the assistant's system prompt.
const AssistantPrompt = "You are the support assistant of an online shop. Look orders up with lookup_order " +
	"before you answer about them. Issue a refund with issue_refund only when the customer asks for one; " +
	"a person approves every refund before it is issued."

// OrderInput is the input of the lookup_order tool.
type OrderInput struct {
	// Order is the order number, like A100.
	Order string `json:"order" jsonschema:"description=The order number, like A100"`
}

// Order is an order as lookup_order returns it.
type Order struct {
	Order  string `json:"order"`
	Item   string `json:"item"`
	Amount int    `json:"amount"`
	Status string `json:"status"`
}

// RefundInput is the input of the issue_refund tool.
type RefundInput struct {
	// Order is the order number.
	Order string `json:"order" jsonschema:"description=The order number"`
	// Amount is the amount to refund, in euros.
	Amount int `json:"amount" jsonschema:"description=The amount to refund in euros"`
}

// lookupOrder answers from a fixed catalogue: every order exists, its item and amount derived
// from its number, so the example needs no database.
func lookupOrder(_ context.Context, in OrderInput) (Order, error) {
	if !orderPattern.MatchString(in.Order) {
		return Order{}, durable.NonRetryable(fmt.Errorf("no order %q: order numbers look like A100", in.Order))
	}
	items := []string{"kettle", "lamp", "backpack", "headphones"}
	n := 0
	for _, r := range in.Order {
		n += int(r)
	}
	return Order{Order: in.Order, Item: items[n%len(items)], Amount: 20 + n%80, Status: "delivered"}, nil
}

// issueRefund pretends to refund: the example's side effect, keyed by the tool call's ID.
func issueRefund(ctx context.Context, in RefundInput) (string, error) {
	return fmt.Sprintf("refunded %d EUR for order %s (reference %s)", in.Amount, in.Order, tool.IdempotencyKey(ctx)), nil
}

// AssistantTools are the assistant's tools: lookup_order, and issue_refund, which needs a
// person's approval.
func AssistantTools() []*tool.Tool {
	return []*tool.Tool{
		tool.Must(tool.New("lookup_order", "Look an order up by its number.", lookupOrder,
			tool.WithRetry(durable.RetryPolicy{MaxAttempts: 3}))),
		tool.Must(tool.New("issue_refund", "Refund an order. A person approves every refund first.", issueRefund,
			tool.RequiresApproval())),
	}
}

// Assistant builds the assistant graph, the example agent: a support assistant with two
// tools, issue_refund waiting for approval, on m (nil: BuiltinModel, deterministic, so the
// example runs without a model vendor).
func Assistant(m model.Model) (durable.GraphRegistration[agent.State], error) {
	if m == nil {
		m = BuiltinModel()
	}
	return agent.New(agent.Config{Name: AssistantName, Model: m, SystemPrompt: AssistantPrompt, Tools: AssistantTools(), MaxTurns: 6},
		durable.WithVersion("1.0.0"))
}

var orderPattern = regexp.MustCompile(`\b[A-Z][0-9]{2,6}\b`)

// BuiltinModel is the assistant's model when no vendor is configured: deterministic rules
// that play the assistant's part. Asked about an order number it looks the order up; asked
// for a refund it then issues one (which waits for approval); it answers the tool results in
// words. It streams its replies word by word and counts tokens in words (model.Answer).
func BuiltinModel() model.Model {
	return model.Func(func(ctx context.Context, req model.Request) (model.Response, error) {
		if err := ctx.Err(); err != nil {
			return model.Response{}, err
		}
		return model.Answer(req, builtinReply(req.Messages))
	})
}

// builtinReply is the built-in model's reply to ms.
func builtinReply(ms []message.Message) message.Message {
	var ask string
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Type == message.TypeHuman {
			ask = ms[i].Text()
			break
		}
	}
	last := ms[len(ms)-1]
	wantsRefund := strings.Contains(strings.ToLower(ask), "refund")
	switch {
	case last.Type == message.TypeHuman:
		order := orderPattern.FindString(ask)
		if order == "" {
			return message.AI("Hello! I can look up your orders and refund them. Which order number is it (like A100)?")
		}
		return message.AI("Let me look up order "+order+".", builtinCall(ms, "lookup_order", OrderInput{Order: order}))
	case last.Type == message.TypeTool && last.Name == "lookup_order":
		var o Order
		if last.Status == message.StatusError || json.Unmarshal([]byte(last.Text()), &o) != nil {
			return message.AI("I could not find that order: " + last.Text())
		}
		if wantsRefund {
			return message.AI(fmt.Sprintf("Order %s (%s, %d EUR) is %s. I am refunding it; a colleague approves refunds first.", o.Order, o.Item, o.Amount, o.Status),
				builtinCall(ms, "issue_refund", RefundInput{Order: o.Order, Amount: o.Amount}))
		}
		return message.AI(fmt.Sprintf("Order %s is your %s for %d EUR, and it is %s.", o.Order, o.Item, o.Amount, o.Status))
	case last.Type == message.TypeTool && last.Name == "issue_refund":
		if last.Status == message.StatusError {
			return message.AI("I did not issue the refund: " + last.Text())
		}
		return message.AI("Done: " + last.Text() + ". Anything else?")
	}
	return message.AI("How else can I help?")
}

// builtinCall is a tool call of the built-in model, its ID numbered by the conversation's
// length so that it is the same on every replay of the turn.
func builtinCall(ms []message.Message, name string, args any) message.ToolCall {
	b, _ := json.Marshal(args)
	return message.ToolCall{ID: fmt.Sprintf("call_%s_%d", name, len(ms)), Name: name, Args: b}
}
