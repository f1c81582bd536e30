package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

type searchIn struct {
	Query string `json:"query"`
}

type refundIn struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

// counters counts the calls of each tool by call ID, and what a refund was issued with.
type counters struct {
	search, refund atomic.Int64
	refunded       atomic.Value // string: order:amount of the last refund
	failSearch     atomic.Int64 // the search fails this many times
}

func tools(c *counters) []*tool.Tool {
	search := tool.Must(tool.New("search", "Search the knowledge base.", func(ctx context.Context, in searchIn) (string, error) {
		c.search.Add(1)
		if c.failSearch.Add(-1) >= 0 {
			return "", errors.New("index unavailable")
		}
		return "article about " + in.Query, nil
	}, tool.WithRetry(durable.RetryPolicy{MaxAttempts: 2})))
	refund := tool.Must(tool.New("refund", "Refund an order.", func(ctx context.Context, in refundIn) (string, error) {
		c.refund.Add(1)
		c.refunded.Store(in.Order + ":" + itoa(in.Amount) + ":" + tool.IdempotencyKey(ctx))
		return "refunded", nil
	}, tool.RequiresApproval()))
	return []*tool.Tool{search, refund}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func call(id, name, args string) message.ToolCall {
	return message.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func input(text string) agent.State {
	return agent.State{Messages: []message.Message{message.Human(text)}}
}

func TestAgent_ToolCallsRunOnceEachAndTheAnswerEnds(t *testing.T) {
	t.Parallel()
	var c counters
	script := model.NewScript(
		message.AI("", call("c1", "search", `{"query":"refunds"}`), call("c2", "search", `{"query":"invoices"}`)),
		message.AI("Refunds take 5 days."),
	)
	g, err := agent.New(agent.Config{Name: "helper", Model: script, SystemPrompt: "You help.", Tools: tools(&c)})
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	run := kit.Start("r1", input("how long do refunds take?"))
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	final := kit.Final("r1")
	if n := c.search.Load(); n != 2 {
		t.Fatalf("search ran %d times, want once per call (2)", n)
	}
	var types []string
	for _, m := range final.Messages {
		types = append(types, m.Type)
	}
	if got := strings.Join(types, ","); got != "human,ai,tool,tool,ai" {
		t.Fatalf("conversation %s", got)
	}
	if final.Messages[2].ToolCallID != "c1" || final.Messages[3].ToolCallID != "c2" || final.Messages[2].Text() != "article about refunds" {
		t.Fatalf("tool results out of call order: %+v", final.Messages[2:4])
	}
	if final.Messages[4].Text() != "Refunds take 5 days." {
		t.Fatalf("answer %q", final.Messages[4].Text())
	}
	reqs := script.Requests()
	if len(reqs) != 2 || reqs[0].Messages[0].Type != message.TypeSystem || len(reqs[0].Tools) != 2 || len(reqs[1].Messages) != 5 {
		t.Fatalf("requests: %d; first %+v", len(reqs), reqs[0].Messages)
	}
	// Usage: the script counts words; two calls summed.
	want := agent.Usage{ModelCalls: 2}
	for _, r := range reqs {
		for _, m := range r.Messages {
			want.InputTokens += int64(len(strings.Fields(m.Text())))
		}
	}
	want.OutputTokens = 4
	if final.Usage != want {
		t.Fatalf("usage %+v, want %+v", final.Usage, want)
	}
	if u := final.Messages[4].Usage; u == nil || u.OutputTokens != 4 {
		t.Fatalf("the reply's own usage: %+v", u)
	}
}

func TestAgent_ApprovalRunsExactlyTheApprovedCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		decision string
		refunds  int64
		refunded string
		toolText string
	}{
		{"approve", `{"decisions":[{"type":"approve"}]}`, 1, "A1:30:c1", "refunded"},
		{"edit", `{"decisions":[{"type":"edit","edited_action":{"name":"refund","args":{"order":"A1","amount":20}}}]}`, 1, "A1:20:c1", "refunded"},
		{"reject", `{"decisions":[{"type":"reject","message":"too much"}]}`, 0, "", "too much"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c counters
			script := model.NewScript(message.AI("Refunding.", call("c1", "refund", `{"order":"A1","amount":30}`)), message.AI("Done."))
			g, err := agent.New(agent.Config{Name: "refunds", Model: script, Tools: tools(&c)})
			if err != nil {
				t.Fatal(err)
			}
			kit := durabletest.New(t, g, durabletest.Options{})
			run := kit.Start("r1", input("refund A1"))
			if ev, ok := run.WaitingFor(); !ok || ev != agent.EventApproval {
				t.Fatalf("status %s, waiting for %q", run.RuntimeStatus, ev)
			}
			if c.refund.Load() != 0 {
				t.Fatal("the refund ran before its approval")
			}
			if pending := kit.State("r1").PendingApproval; len(pending) != 1 || pending[0].ID != "c1" {
				t.Fatalf("pending %+v, want the refund call c1", pending)
			}
			var pe *durable.EventPayloadError
			if bad := kit.Engine().RaiseEvent(t.Context(), "r1", agent.EventApproval, []byte(`{"decisions":[{"type":"maybe"}]}`)); !errors.As(bad, &pe) {
				t.Fatal("a decision of an unknown type was accepted")
			}
			var payload any
			_ = json.Unmarshal([]byte(tc.decision), &payload)
			run = kit.Send("r1", agent.EventApproval, payload)
			if run.RuntimeStatus != durabletest.StatusCompleted {
				t.Fatalf("status after the decision: %s", run.RuntimeStatus)
			}
			if n := c.refund.Load(); n != tc.refunds {
				t.Fatalf("refund ran %d times, want %d", n, tc.refunds)
			}
			if got, _ := c.refunded.Load().(string); got != tc.refunded {
				t.Fatalf("refund ran with %q, want %q", got, tc.refunded)
			}
			final := kit.Final("r1")
			if final.Messages[2].Type != message.TypeTool || !strings.Contains(final.Messages[2].Text(), tc.toolText) {
				t.Fatalf("tool message %+v", final.Messages[2])
			}
			if tc.name == "edit" && string(final.Messages[1].ToolCalls[0].Args) != `{"amount":20,"order":"A1"}` {
				t.Fatalf("the conversation does not show the edited call: %s", final.Messages[1].ToolCalls[0].Args)
			}
		})
	}
}

func TestAgent_ToolErrorsRetryThenGoBackToTheModel(t *testing.T) {
	t.Parallel()
	var c counters
	c.failSearch.Store(5) // more failures than the search's 2 attempts
	script := model.NewScript(message.AI("", call("c1", "search", `{"query":"x"}`), call("c2", "nope", `{}`)), message.AI("Sorry."))
	g, err := agent.New(agent.Config{Name: "errs", Model: script, Tools: tools(&c)})
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	run := kit.Start("r1", input("x"))
	for range 10 {
		if run.RuntimeStatus == durabletest.StatusCompleted {
			break
		}
		kit.Advance(10 * 1e9)
		run = kit.Run("r1")
	}
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	if n := c.search.Load(); n != 2 {
		t.Fatalf("search attempted %d times, want its policy's 2", n)
	}
	final := kit.Final("r1")
	if m := final.Messages[2]; m.Status != message.StatusError || !strings.Contains(m.Text(), "index unavailable") {
		t.Fatalf("the last failure is not the model's to read: %+v", m)
	}
	if m := final.Messages[3]; m.Status != message.StatusError || !strings.Contains(m.Text(), "nope is not a valid tool") {
		t.Fatalf("unknown tool: %+v", m)
	}
	if len(script.Requests()) != 2 {
		t.Fatalf("model asked %d times", len(script.Requests()))
	}
}

func TestAgent_MaxTurnsFailsTheRun(t *testing.T) {
	t.Parallel()
	var c counters
	var replies []message.Message
	for i := range 5 {
		replies = append(replies, message.AI("", call("c"+itoa(i), "search", `{"query":"again"}`)))
	}
	g, err := agent.New(agent.Config{Name: "loop", Model: model.NewScript(replies...), Tools: tools(&c), MaxTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	run := kit.Start("r1", input("x"))
	if run.RuntimeStatus != durabletest.StatusFailed || !strings.Contains(run.FailureMessage(), "3 model turns without a final answer") {
		t.Fatalf("status %s: %s", run.RuntimeStatus, run.FailureMessage())
	}
}

func TestNew_RefusesBadConfigs(t *testing.T) {
	t.Parallel()
	var c counters
	ts := tools(&c)
	for name, cfg := range map[string]agent.Config{
		"no model":       {Name: "a", Tools: ts},
		"duplicate tool": {Name: "a", Model: model.NewScript(), Tools: []*tool.Tool{ts[0], ts[0]}},
		"negative turns": {Name: "a", Model: model.NewScript(), MaxTurns: -1},
	} {
		if _, err := agent.New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A reply whose only call could not be parsed does not end the turn silently: the call is
// answered with an error tool message and the model is asked again, and its next, valid
// call runs.
func TestAgent_UnparsableCallGoesBackToTheModel(t *testing.T) {
	t.Parallel()
	var c counters
	bad := message.AI("")
	bad.InvalidToolCalls = []message.InvalidToolCall{{Name: "search", Args: `{"query": "x"`, Error: "unexpected end of JSON input"}}
	script := model.NewScript(bad, message.AI("", call("c1", "search", `{"query":"x"}`)), message.AI("Found it."))
	g, err := agent.New(agent.Config{Name: "invalid", Model: script, Tools: tools(&c)})
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	if run := kit.Start("r1", input("x")); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s: %s", run.RuntimeStatus, run.FailureMessage())
	}
	final := kit.Final("r1")
	reply, answer := final.Messages[1], final.Messages[2]
	if id := reply.InvalidToolCalls[0].ID; id == "" || answer.ToolCallID != id {
		t.Fatalf("the unparsable call %q is answered by %q", id, answer.ToolCallID)
	}
	if answer.Status != message.StatusError || !strings.Contains(answer.Text(), "unexpected end of JSON input") {
		t.Fatalf("the model is not told what was wrong: %+v", answer)
	}
	if n := c.search.Load(); n != 1 {
		t.Fatalf("search ran %d times, want once (the valid call)", n)
	}
	if got := final.Messages[len(final.Messages)-1].Text(); got != "Found it." {
		t.Fatalf("final answer %q", got)
	}
	if n := len(script.Requests()); n != 3 {
		t.Fatalf("model asked %d times, want 3", n)
	}
}
