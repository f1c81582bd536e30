package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// Approval is the body of the approval event: one decision per pending call
// (State.PendingApproval), in their order, or each naming its call by ToolCallID. As LangChain's
// human-in-the-loop middleware resumes an interrupt: {"decisions": [{"type": "approve"},
// {"type": "edit", "edited_action": {"name": "…", "args": {…}}}, {"type": "reject",
// "message": "…"}]}. Calls it leaves undecided keep the run waiting.
type Approval struct {
	// Decisions are the decisions, in the pending calls' order.
	Decisions []Decision `json:"decisions"`
}

// The types of a Decision.
const (
	DecisionApprove = "approve"
	DecisionEdit    = "edit"
	DecisionReject  = "reject"
)

// Decision is a person's decision on one pending call.
type Decision struct {
	// Type is DecisionApprove (run the call as made), DecisionEdit (run it with Args) or
	// DecisionReject (do not run it; Message goes back to the model as the call's error).
	Type string `json:"type"`
	// ToolCallID names the call decided; empty, the decision is for the pending call at its
	// position.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Args are an edit's arguments, a JSON object (or EditedAction.Args).
	Args json.RawMessage `json:"args,omitempty"`
	// EditedAction is an edit in LangChain's shape: the call's name and new args.
	EditedAction *EditedAction `json:"edited_action,omitempty"`
	// Message is a rejection's reason for the model.
	Message string `json:"message,omitempty"`
}

// EditedAction is an edited call, as LangChain's middleware carries it.
type EditedAction struct {
	// Name is the tool's name; it must be the call's.
	Name string `json:"name"`
	// Args are the edited arguments.
	Args json.RawMessage `json:"args"`
}

// Validate reports a decision of an unknown type, or an edit without arguments that are a
// JSON object. The engine checks it before the event is stored, and refuses the event.
func (p Approval) Validate() error {
	if len(p.Decisions) == 0 {
		return fmt.Errorf("decisions: at least one decision required")
	}
	for i, d := range p.Decisions {
		switch d.Type {
		case DecisionApprove, DecisionReject:
		case DecisionEdit:
			if args := d.editArgs(); !isObject(args) {
				return fmt.Errorf("decisions[%d]: an edit needs args, a JSON object", i)
			}
		default:
			return fmt.Errorf("decisions[%d]: type must be approve, edit or reject", i)
		}
	}
	return nil
}

func (d Decision) editArgs() json.RawMessage {
	if d.EditedAction != nil && len(d.Args) == 0 {
		return d.EditedAction.Args
	}
	return d.Args
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// undecided returns the pending calls that have no decision yet, in order.
func undecided(s State) []message.ToolCall {
	open := map[string]bool{}
	for _, c := range unanswered(s.Messages) {
		open[c.ID] = true
	}
	var out []message.ToolCall
	for _, c := range s.PendingApproval {
		if open[c.ID] && !slices.Contains(s.Approved, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// decide applies an approval event: an approved call is marked so, an edited one gets its
// new arguments in the model's message (so the conversation shows what ran) and is marked
// approved, a rejected one is answered by an error tool message. A decision for a call that is
// not pending (decided already, or unknown) is ignored.
func (a *agent) decide(_ context.Context, s State, p Approval) (State, error) {
	pending := undecided(s)
	for i, d := range p.Decisions {
		var call message.ToolCall
		switch {
		case d.ToolCallID != "":
			j := slices.IndexFunc(pending, func(c message.ToolCall) bool { return c.ID == d.ToolCallID })
			if j < 0 {
				continue
			}
			call = pending[j]
		case i < len(pending):
			call = pending[i]
		default:
			continue
		}
		if slices.Contains(s.Approved, call.ID) || !slices.ContainsFunc(unanswered(s.Messages), func(c message.ToolCall) bool { return c.ID == call.ID }) {
			continue // decided by an earlier decision of this event
		}
		switch d.Type {
		case DecisionApprove:
			s.Approved = append(s.Approved, call.ID)
		case DecisionEdit:
			s.Messages = editCall(s.Messages, call.ID, compact(d.editArgs()))
			s.PendingApproval = slices.Clone(s.PendingApproval)
			for k := range s.PendingApproval {
				if s.PendingApproval[k].ID == call.ID {
					s.PendingApproval[k].Args = compact(d.editArgs())
				}
			}
			s.Approved = append(s.Approved, call.ID)
		case DecisionReject:
			reason := d.Message
			if reason == "" {
				reason = "The user rejected this tool call."
			}
			s.Messages = append(s.Messages, message.ToolError(call, reason))
		}
	}
	return s, nil
}

// editCall returns ms with the args of call id replaced in the last AI message.
func editCall(ms []message.Message, id string, args json.RawMessage) []message.Message {
	out := slices.Clone(ms)
	i := lastAI(out)
	if i < 0 {
		return out
	}
	m := out[i]
	m.ToolCalls = slices.Clone(m.ToolCalls)
	for k := range m.ToolCalls {
		if m.ToolCalls[k].ID == id {
			m.ToolCalls[k].Args = args
		}
	}
	out[i] = m
	return out
}

// compact returns an edit's arguments as the conversation records them: compact JSON, keys in
// order (raw as it is when it does not decode as an object; Validate refused that already).
func compact(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	enc, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return enc
}

// approvalNote is the wait's note: the calls waiting, as a person reads them.
func approvalNote(calls []message.ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = fmt.Sprintf("%s(%s) [%s]", c.Name, c.Args, c.ID)
	}
	return "approve, edit or reject: " + strings.Join(parts, ", ")
}
