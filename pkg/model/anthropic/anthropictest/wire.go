package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// wireBlock is a content block as the API sends it. A block being streamed starts empty
// (empty reports that shape) and is filled by its deltas.
func wireBlock(b Block, empty bool) map[string]any {
	switch b.Type {
	case "tool_use":
		input := json.RawMessage("{}")
		if len(b.Input) > 0 && !empty {
			input = b.Input
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	case "thinking":
		if empty {
			return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		}
		return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
	}
	if empty {
		return map[string]any{"type": "text", "text": ""}
	}
	return map[string]any{"type": "text", "text": b.Text}
}

func wireUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
	}
}

// stopReason returns the reply's stop reason, defaulted from its content.
func (r Reply) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (r Reply) stopDetails() any {
	if r.Refusal == "" {
		return nil
	}
	return map[string]any{"type": "refusal", "category": "cyber", "explanation": r.Refusal}
}

// wireReply returns the non-streamed JSON of the reply to request n.
func wireReply(r Reply, model string, n int) map[string]any {
	content := make([]any, len(r.Content))
	for i, b := range r.Content {
		content[i] = wireBlock(b, false)
	}
	return map[string]any{
		"id": fmt.Sprintf("msg_test_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil,
		"stop_details": r.stopDetails(), "usage": wireUsage(r.Usage),
	}
}

// writeStream writes the reply as Anthropic streams a message: message_start (usage with
// the input tokens and one output token), a ping, each block's start, deltas and stop,
// message_delta with the stop reason and the whole usage, message_stop.
func writeStream(w http.ResponseWriter, r Reply, model string, n int, requestID string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := wireReply(r, model, n)
	start["content"], start["stop_reason"], start["stop_details"] = []any{}, nil, nil
	first := r.Usage
	first.OutputTokens = min(first.OutputTokens, 1)
	start["usage"] = wireUsage(first)
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	chunk := r.Chunk
	if chunk <= 0 {
		chunk = 4
	}
	for i, b := range r.Content {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": wireBlock(b, true)})
		delta := func(d map[string]any) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		switch b.Type {
		case "tool_use":
			for _, p := range pieces(string(b.Input), chunk) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		case "thinking":
			for _, p := range pieces(b.Thinking, chunk) {
				delta(map[string]any{"type": "thinking_delta", "thinking": p})
			}
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
		default:
			for _, p := range pieces(b.Text, chunk) {
				delta(map[string]any{"type": "text_delta", "text": p})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if r.StreamError != "" {
		send("error", errorBody(r.StreamError, "stream failed", requestID))
		return
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil, "stop_details": r.stopDetails()},
		"usage": wireUsage(r.Usage)})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// pieces splits s into pieces of n characters (runes), the last one shorter.
func pieces(s string, n int) []string {
	var out []string
	rs := []rune(s)
	for len(rs) > n {
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	if len(rs) > 0 {
		out = append(out, string(rs))
	}
	return out
}
