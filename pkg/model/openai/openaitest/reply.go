package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// created is the fixed creation time of every reply, so that replies are deterministic.
const created = 1_700_000_000

// completion returns the JSON body of reply as the n-th (0-based) chat completion.
func completion(req Request, reply Reply, n int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nullable(reply.Text), "refusal": nullable(reply.Refusal)}
	if len(reply.ToolCalls) > 0 {
		calls := make([]map[string]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			calls[i] = map[string]any{"id": callID(c, n, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": completionID(n), "object": "chat.completion", "created": created, "model": modelName(req, reply),
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finishReason(reply), "logprobs": nil}},
		"usage":   usage(reply.Usage),
	}
}

// stream writes reply as server-sent events: a role chunk, the text (or refusal) in pieces,
// each tool call in a head chunk (id, name) and argument chunks, a finish chunk, a usage
// chunk when asked, and [DONE]; or, with a StreamError, the text and then the error. On the Azure path it adds Azure OpenAI's content-filter
// annotations, chunks with an empty id and no delta: the prompt's filter results first,
// and the reply's (content_filter_offsets, as its asynchronous filter sends them) after
// the finish chunk.
func (s *Server) stream(w http.ResponseWriter, req Request, reply Reply, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	id, model := completionID(n), modelName(req, reply)
	write := func(chunk map[string]any) {
		b, _ := json.Marshal(chunk)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send := func(choices []map[string]any, u any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices}
		if u != nil {
			chunk["usage"] = u
		}
		write(chunk)
	}
	if req.Azure() {
		write(map[string]any{"id": "", "object": "", "created": 0, "model": "", "choices": []map[string]any{},
			"prompt_filter_results": []map[string]any{{"prompt_index": 0, "content_filter_results": safe}}})
	}
	delta := func(d map[string]any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": nil, "logprobs": nil}}
	}

	send(delta(map[string]any{"role": "assistant", "content": ""}), nil)
	pieces := reply.Pieces
	if pieces == nil {
		pieces = SplitWords(reply.Text)
	}
	for _, p := range pieces {
		send(delta(map[string]any{"content": p}), nil)
	}
	if e := reply.StreamError; e != nil {
		write(map[string]any{"error": errorBody(*e)})
		return
	}
	for _, p := range SplitWords(reply.Refusal) {
		send(delta(map[string]any{"refusal": p}), nil)
	}
	for i, c := range reply.ToolCalls {
		send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": callID(c, n, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}), nil)
		for _, a := range splitThirds(c.Arguments) {
			send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": a}}}}), nil)
		}
	}
	send([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finishReason(reply), "logprobs": nil}}, nil)
	if req.Azure() {
		end := len(reply.Text)
		write(map[string]any{"id": "", "object": "", "created": 0, "model": "", "choices": []map[string]any{{"index": 0, "finish_reason": nil,
			"content_filter_results": safe, "content_filter_offsets": map[string]any{"check_offset": 0, "start_offset": 0, "end_offset": end}}}})
	}
	if o := req.Body.StreamOptions; o != nil && o.IncludeUsage {
		send([]map[string]any{}, usage(reply.Usage))
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// safe is the content filter's results of an Azure annotation: nothing filtered.
var safe = map[string]any{
	"hate": map[string]any{"filtered": false, "severity": "safe"}, "self_harm": map[string]any{"filtered": false, "severity": "safe"},
	"sexual": map[string]any{"filtered": false, "severity": "safe"}, "violence": map[string]any{"filtered": false, "severity": "safe"},
}

// SplitWords splits text into the pieces a Server streams it in: each word with the spaces
// after it. The pieces join back to text; an empty text has none.
func SplitWords(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// splitThirds splits s into up to three pieces at byte offsets, so that a streamed JSON
// value arrives cut mid-token, as the API sends arguments.
func splitThirds(s string) []string {
	if len(s) < 3 {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

// usage returns the JSON of u as the API sends it.
func usage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens":          u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

// finishReason returns reply's finish reason, defaulted from its tool calls.
func finishReason(reply Reply) string {
	switch {
	case reply.FinishReason != "":
		return reply.FinishReason
	case len(reply.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// modelName returns the model a reply names: its own, else the request's.
func modelName(req Request, reply Reply) string {
	if reply.Model != "" {
		return reply.Model
	}
	return req.Body.Model
}

// completionID names the n-th completion.
func completionID(n int) string { return fmt.Sprintf("chatcmpl-test-%d", n+1) }

// callID returns c's ID, or one from its position: call i of reply n.
func callID(c ToolCall, n, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", n+1, i+1)
}
