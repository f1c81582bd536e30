package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

// The nodes and the event of an agent's graph.
const (
	// NodeModel is the model turn: one model call, its reply appended to the conversation.
	NodeModel = "model"
	// NodeTools dispatches the last turn's tool calls, one branch each, once every call that
	// needs approval has a decision; the branches join at NodeModel.
	NodeTools = "tools"
	// NodeAnswer asks the model for the structured final answer (Config.Output).
	NodeAnswer = "answer"
	// NodeUnknownTool answers a call of a tool the agent does not have, with an error.
	NodeUnknownTool = "unknown_tool"
	// EventApproval is the event that carries the decisions on the pending calls (Approval).
	EventApproval = "approval"
)

// ToolNode returns the name of the node that runs calls of the tool name: "tool_<name>".
func ToolNode(name string) string { return "tool_" + name }

// Config is an agent.
type Config struct {
	// Name is the graph's name (New).
	Name string
	// Model answers the turns. Required.
	Model model.Model
	// SystemPrompt, when set, is sent as the first message of every turn; it is not stored
	// in the conversation.
	SystemPrompt string
	// Tools are the tools the model may call; their names must be distinct.
	Tools []*tool.Tool
	// MaxTurns bounds the model turns since the last human message; a run that needs more
	// fails (default 10).
	MaxTurns int
	// Output, when set, asks for a structured final answer of its schema once the model is
	// done with tools (NodeAnswer), kept in State.StructuredResponse.
	Output *model.OutputSchema
	// MaxTokens bounds each reply's tokens (0: the adapter's default).
	MaxTokens int64
	// Temperature is the sampling temperature (nil: the vendor's).
	Temperature *float64
	// ModelRetry is the model turn's retry policy (default: 3 attempts, 2 s apart and
	// doubling). A retried turn is a new request: only a committed reply is never paid twice.
	ModelRetry *durable.RetryPolicy
	// ModelTimeout bounds one model call (default 2 min); keep it below functionTimeout.
	ModelTimeout time.Duration
	// NoLiveTokens turns off writing a reply's text to the run's live channel as it is
	// generated.
	NoLiveTokens bool
	// Then, for Add, is the node the run goes on to after the final answer; empty, the run
	// completes.
	Then string
}

// Defaults of Config.
const (
	DefaultMaxTurns     = 10
	DefaultModelTimeout = 2 * time.Minute
)

var defaultModelRetry = durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: 2 * time.Second}

// agent is a validated Config.
type agent struct {
	Config
	tools map[string]*tool.Tool
	defs  []model.ToolDef
}

// New returns the agent's durable graph, named cfg.Name: it starts at NodeModel and
// completes with the final answer. Errors: a Config Add refuses, or Build's.
func New(cfg Config, opts ...durable.BuilderOption) (durable.GraphRegistration[State], error) {
	b := durable.NewManifestBuilder[State](cfg.Name, opts...)
	entry, err := Add(b, cfg)
	if err != nil {
		return durable.GraphRegistration[State]{}, err
	}
	b.SetEntrypoint(entry)
	return b.Build()
}

// Add adds the agent's nodes, its approval event and the messages reducer to b, and returns
// the node to enter it by (NodeModel). Nodes of b's own may lead to it (WithNext) and follow
// it (Config.Then). Errors: no model, two tools of one name, a negative MaxTurns or
// ModelTimeout, or the builder's (a node name b already has).
func Add(b *durable.ManifestBuilder[State], cfg Config) (string, error) {
	a, err := newAgent(cfg)
	if err != nil {
		return "", err
	}
	retry := defaultModelRetry
	if cfg.ModelRetry != nil {
		retry = *cfg.ModelRetry
	}
	steps := []struct {
		name string
		fn   durable.StepFunc[State]
		opts []durable.NodeOption
	}{
		{NodeModel, a.modelTurn, []durable.NodeOption{durable.WithDecide(a.afterModel), durable.WithRetry(retry), durable.WithTimeout(a.ModelTimeout)}},
		{NodeTools, func(_ context.Context, s State) (State, error) { return s, nil }, []durable.NodeOption{durable.WithDecide(a.dispatch)}},
		{NodeUnknownTool, unknownTool, []durable.NodeOption{durable.Terminal()}},
	}
	if a.Output != nil {
		steps = append(steps, struct {
			name string
			fn   durable.StepFunc[State]
			opts []durable.NodeOption
		}{NodeAnswer, a.answer, []durable.NodeOption{durable.WithDecide(a.finish), durable.WithRetry(retry), durable.WithTimeout(a.ModelTimeout)}})
	}
	for _, st := range steps {
		if err := b.AddStep(st.name, st.fn, st.opts...); err != nil {
			return "", err
		}
	}
	for _, t := range cfg.Tools {
		opts := []durable.NodeOption{durable.Terminal()}
		if p := t.RetryPolicy(); p.MaxAttempts > 1 {
			opts = append(opts, durable.WithRetry(p))
		} else {
			opts = append(opts, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 1}))
		}
		if err := b.AddStep(ToolNode(t.Name()), runTool(t), opts...); err != nil {
			return "", err
		}
	}
	if err := durable.OnEvent(b, EventApproval, a.decide); err != nil {
		return "", err
	}
	if err := b.Reduce("messages", message.AddMessages); err != nil {
		return "", err
	}
	return NodeModel, nil
}

func newAgent(cfg Config) (*agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: a model is required")
	}
	if cfg.MaxTurns < 0 || cfg.ModelTimeout < 0 {
		return nil, errors.New("agent: MaxTurns and ModelTimeout must not be negative")
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.ModelTimeout == 0 {
		cfg.ModelTimeout = DefaultModelTimeout
	}
	a := &agent{Config: cfg, tools: map[string]*tool.Tool{}}
	for _, t := range cfg.Tools {
		if t == nil {
			return nil, errors.New("agent: a nil tool")
		}
		if _, dup := a.tools[t.Name()]; dup {
			return nil, fmt.Errorf("agent: two tools named %s", t.Name())
		}
		a.tools[t.Name()] = t
		a.defs = append(a.defs, t.Def())
	}
	return a, nil
}

// request is the model request of a turn on ms.
func (a *agent) request(ms []message.Message, tools []model.ToolDef) model.Request {
	req := model.Request{Tools: tools, MaxTokens: a.MaxTokens, Temperature: a.Temperature}
	if a.SystemPrompt != "" {
		req.Messages = append(make([]message.Message, 0, len(ms)+1), message.System(a.SystemPrompt))
	}
	req.Messages = append(req.Messages, ms...)
	return req
}

// modelTurn asks the model for the next reply and appends it.
func (a *agent) modelTurn(ctx context.Context, s State) (State, error) {
	if n := turns(s.Messages); n >= a.MaxTurns {
		return s, durable.NonRetryable(fmt.Errorf("agent: %d model turns without a final answer (MaxTurns)", n))
	}
	// Give every message an ID (the input's came without): clients tell messages apart by it.
	ms, err := message.Add(s.Messages)
	if err != nil {
		return s, durable.NonRetryable(fmt.Errorf("model turn: %w", err))
	}
	s.Messages = ms
	id := replyID(ctx)
	req := a.request(s.Messages, a.defs)
	if !a.NoLiveTokens {
		req.OnText = liveText(ctx, id)
	}
	resp, err := a.Model.Generate(ctx, req)
	if err != nil {
		if errors.Is(err, model.ErrRefused) {
			return s, durable.NonRetryable(fmt.Errorf("model turn: %w", err))
		}
		return s, fmt.Errorf("model turn: %w", err)
	}
	reply := resp.Message
	reply.Type, reply.ID = message.TypeAI, id
	usage := resp.Usage
	reply.Usage = &usage
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("%s-call-%d", id, i)
		}
		if len(reply.ToolCalls[i].Args) == 0 {
			reply.ToolCalls[i].Args = json.RawMessage("{}")
		}
	}
	s.Messages = append(s.Messages, reply)
	s.Messages = append(s.Messages, invalidCallErrors(id, reply.InvalidToolCalls)...)
	s.Usage = s.Usage.add(usage)
	s.PendingApproval, s.Approved = nil, nil
	for _, c := range reply.ToolCalls {
		if t := a.tools[c.Name]; t != nil && t.NeedsApproval() {
			s.PendingApproval = append(s.PendingApproval, c)
		}
	}
	return s, nil
}

// invalidCallErrors answers the calls of a reply that the vendor could not parse with error
// tool messages, so that the next model turn sees what was wrong and can call again; the
// reply's calls without an ID get one (id-invalid-i) that its answer names.
func invalidCallErrors(id string, calls []message.InvalidToolCall) []message.Message {
	var out []message.Message
	for i := range calls {
		c := &calls[i]
		if c.ID == "" {
			c.ID = fmt.Sprintf("%s-invalid-%d", id, i)
		}
		why := c.Error
		if why == "" {
			why = "the arguments are not a JSON object"
		}
		out = append(out, message.ToolError(message.ToolCall{ID: c.ID, Name: c.Name},
			fmt.Sprintf("Error: the call of %s could not be parsed (%s). Call it again with arguments that are a JSON object.", c.Name, why)))
	}
	return out
}

// afterModel goes to the tools when the reply calls any, back to the model when it made only
// calls that could not be parsed (answered with errors by modelTurn), else to the final answer.
func (a *agent) afterModel(_ context.Context, s State) (durable.RouteDecision, error) {
	if len(unanswered(s.Messages)) > 0 {
		return durable.Next(NodeTools), nil
	}
	if i := lastAI(s.Messages); i >= 0 && len(s.Messages[i].InvalidToolCalls) > 0 {
		return durable.Next(NodeModel), nil
	}
	if a.Output != nil {
		return durable.Next(NodeAnswer), nil
	}
	return a.finish(context.Background(), s)
}

// finish ends the agent: on to Config.Then, or the run completes.
func (a *agent) finish(context.Context, State) (durable.RouteDecision, error) {
	if a.Then != "" {
		return durable.Next(a.Then), nil
	}
	return durable.Complete(""), nil
}

// dispatch waits for the decisions on the pending calls, then runs every call that is
// approved or needs no approval, one branch each, joining at the next model turn.
func (a *agent) dispatch(_ context.Context, s State) (durable.RouteDecision, error) {
	if undecided := undecided(s); len(undecided) > 0 {
		return durable.WaitForEvent(EventApproval, NodeTools).WithNote(approvalNote(undecided)), nil
	}
	var bs []durable.Branch
	for _, c := range unanswered(s.Messages) {
		item, err := json.Marshal(c)
		if err != nil {
			return durable.RouteDecision{}, err
		}
		node := NodeUnknownTool
		if a.tools[c.Name] != nil {
			node = ToolNode(c.Name)
		}
		bs = append(bs, durable.Branch{Node: node, Item: item})
	}
	if len(bs) == 0 {
		return durable.Next(NodeModel), nil
	}
	return durable.RouteDecision{Action: durable.ActionParallel, Branches: bs, JoinNode: NodeModel}, nil
}

// answer asks the model for the structured final answer.
func (a *agent) answer(ctx context.Context, s State) (State, error) {
	req := a.request(s.Messages, nil)
	req.Output = a.Output
	resp, err := a.Model.Generate(ctx, req)
	if err != nil {
		return s, fmt.Errorf("structured answer: %w", err)
	}
	text := resp.Message.Text()
	if !json.Valid([]byte(text)) {
		return s, fmt.Errorf("structured answer: the model's answer is not JSON")
	}
	answer := json.RawMessage(text)
	s.StructuredResponse = &answer
	s.Usage = s.Usage.add(resp.Usage)
	return s, nil
}

// runTool returns the step that runs one call of t, the branch's item. A failure the tool's
// retry policy retries is returned (the engine retries the step); the last goes back to the
// model as an error tool message.
func runTool(t *tool.Tool) durable.StepFunc[State] {
	return func(ctx context.Context, s State) (State, error) {
		call, err := durable.BranchItem[message.ToolCall](ctx)
		if err != nil {
			return s, durable.NonRetryable(err)
		}
		out, err := t.Call(ctx, call)
		if err != nil {
			info, _ := durable.StepInfoFrom(ctx)
			if !durable.IsNonRetryable(err) && info.Attempt < t.RetryPolicy().MaxAttempts && ctx.Err() == nil {
				return s, err
			}
			return branchResult(s, message.ToolError(call, "Error: "+err.Error())), nil
		}
		return branchResult(s, message.ToolResult(call, out)), nil
	}
}

// branchResult is the state a tool branch returns: its messages field holds the tool message
// alone, which the messages reducer appends at the join (a list that does not begin with the
// conversation is a branch's new messages). A branch's result is stored in its history row,
// so the conversation is not stored again for every call.
func branchResult(s State, m message.Message) State {
	s.Messages = []message.Message{m}
	return s
}

// unknownTool answers a call of a tool the agent lacks.
func unknownTool(ctx context.Context, s State) (State, error) {
	call, err := durable.BranchItem[message.ToolCall](ctx)
	if err != nil {
		return s, durable.NonRetryable(err)
	}
	return branchResult(s, message.ToolError(call, fmt.Sprintf("Error: %s is not a valid tool.", call.Name))), nil
}
