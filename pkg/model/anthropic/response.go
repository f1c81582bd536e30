package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// response maps a reply to a model.Response: its text blocks (and thinking blocks, kept as
// parts), its tool_use blocks as tool calls, its usage and stop reason. A "refusal" stop is
// model.ErrRefused, with the explanation Anthropic gave.
func response(reply *sdk.Message) (model.Response, error) {
	if reply.StopReason == sdk.StopReasonRefusal {
		if e := reply.StopDetails.Explanation; e != "" {
			return model.Response{}, fmt.Errorf("anthropic: %w: %s", model.ErrRefused, e)
		}
		return model.Response{}, fmt.Errorf("anthropic: %w", model.ErrRefused)
	}
	var text strings.Builder
	var parts []message.Part
	kept := false // a block other than text is kept: the content is a list of parts
	var calls []message.ToolCall
	for _, b := range reply.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			parts = append(parts, message.TextPart(b.Text))
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			calls = append(calls, message.ToolCall{ID: b.ID, Name: b.Name, Args: append(json.RawMessage(nil), args...)})
		case "thinking", "redacted_thinking":
			parts = append(parts, message.Part{Type: b.Type, Raw: json.RawMessage(b.RawJSON())})
			kept = true
		}
	}
	content := message.Text(text.String())
	if kept {
		content = message.Parts(parts...)
	}
	u := reply.Usage
	usage := message.Usage{
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
	}
	stop := stopReason(reply.StopReason, len(calls) > 0)
	msg := message.Message{
		Type: message.TypeAI, Content: content, ToolCalls: calls, Usage: &usage,
		ResponseMetadata: map[string]any{
			"id": reply.ID, "model": string(reply.Model), "model_name": string(reply.Model),
			"stop_reason": string(reply.StopReason), "stop_sequence": reply.StopSequence,
		},
	}
	return model.Response{Message: msg, Usage: usage, StopReason: stop, Model: string(reply.Model)}, nil
}

// stopReason maps Anthropic's stop reason: tool_use to model.StopToolCalls, max_tokens and
// model_context_window_exceeded to model.StopLength, end_turn, stop_sequence, pause_turn and
// any other to model.StopEnd (model.StopToolCalls if the reply asks for tool calls).
func stopReason(r sdk.StopReason, calls bool) string {
	switch r {
	case sdk.StopReasonToolUse:
		return model.StopToolCalls
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return model.StopLength
	}
	if calls {
		return model.StopToolCalls
	}
	return model.StopEnd
}
