package agent

import (
	"encoding/json"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// State is an agent's state: the conversation, the calls waiting for approval, the tokens
// spent. Start a run with the conversation so far ({"messages": [{"role": "user", "content":
// "…"}]}); the run ends with the model's final answer as the last message.
type State struct {
	// Messages is the conversation, with add_messages semantics at a fan-out's join.
	Messages []message.Message `json:"messages"`
	// PendingApproval are the tool calls of the last model turn that wait for a person's
	// decision (the approval event), in the order the model made them.
	PendingApproval []message.ToolCall `json:"pending_approval"`
	// Approved are the IDs of the pending calls a person approved (as made, or edited).
	Approved []string `json:"approved"`
	// Usage is what the run's model turns cost, summed.
	Usage Usage `json:"usage"`
	// StructuredResponse is the final answer as a JSON value of Config.Output's schema, when
	// the agent has one.
	StructuredResponse *json.RawMessage `json:"structured_response"`
}

// Usage is the tokens a run's model turns cost.
type Usage struct {
	// ModelCalls counts the model replies the run committed.
	ModelCalls int64 `json:"model_calls"`
	// InputTokens are the prompts' tokens, cached ones included.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens are the replies' tokens.
	OutputTokens int64 `json:"output_tokens"`
	// CachedInputTokens are the input tokens read from the vendor's prompt cache.
	CachedInputTokens int64 `json:"cached_input_tokens"`
}

// add returns u with one more call of usage v.
func (u Usage) add(v message.Usage) Usage {
	return Usage{ModelCalls: u.ModelCalls + 1, InputTokens: u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens, CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens}
}

// lastAI returns the index of the conversation's last AI message, or -1.
func lastAI(ms []message.Message) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Type == message.TypeAI {
			return i
		}
	}
	return -1
}

// unanswered returns the tool calls of the last AI message that no tool message answers.
func unanswered(ms []message.Message) []message.ToolCall {
	i := lastAI(ms)
	if i < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range ms[i+1:] {
		if m.Type == message.TypeTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []message.ToolCall
	for _, c := range ms[i].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// turns counts the model turns since the last human message.
func turns(ms []message.Message) int {
	n := 0
	for i := len(ms) - 1; i >= 0 && ms[i].Type != message.TypeHuman; i-- {
		if ms[i].Type == message.TypeAI {
			n++
		}
	}
	return n
}
