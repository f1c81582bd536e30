package message

import (
	"encoding/json"
)

// wireMessage is a message as LangChain (langchain-core 1.x) serializes it into a graph's
// state (model_dump), its keys in LangChain's order. Pointers and the omitempty fields leave
// out what a type lacks; the others are null when empty, as LangChain's are.
type wireMessage struct {
	Content          Content            `json:"content"`
	AdditionalKwargs map[string]any     `json:"additional_kwargs"`
	ResponseMetadata map[string]any     `json:"response_metadata"`
	Type             string             `json:"type"`
	Name             *string            `json:"name"`
	ID               *string            `json:"id"`
	ToolCalls        *[]wireToolCall    `json:"tool_calls,omitempty"`
	InvalidToolCalls *[]wireInvalidCall `json:"invalid_tool_calls,omitempty"`
	UsageMetadata    *json.RawMessage   `json:"usage_metadata,omitempty"`
	ToolCallID       *string            `json:"tool_call_id,omitempty"`
	Artifact         *json.RawMessage   `json:"artifact,omitempty"`
	Status           *string            `json:"status,omitempty"`
}

// wireToolCall is LangChain's ToolCall.
type wireToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   *string         `json:"id"`
	Type string          `json:"type"`
}

// wireInvalidCall is LangChain's InvalidToolCall.
type wireInvalidCall struct {
	Type  string  `json:"type"`
	ID    *string `json:"id"`
	Name  *string `json:"name"`
	Args  *string `json:"args"`
	Error *string `json:"error"`
}

// wireUsage is LangChain's UsageMetadata, input_token_details only when the cache was read.
type wireUsage struct {
	InputTokens       int64         `json:"input_tokens"`
	OutputTokens      int64         `json:"output_tokens"`
	TotalTokens       int64         `json:"total_tokens"`
	InputTokenDetails *wireInDetail `json:"input_token_details,omitempty"`
}

type wireInDetail struct {
	CacheRead int64 `json:"cache_read"`
}

var jsonNull = json.RawMessage("null")

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// MarshalJSON encodes m as LangChain serializes a message of its type in a graph's state:
// {"content", "additional_kwargs": {}, "response_metadata": {}, "type", "name": null,
// "id": null}, then for an AI message "tool_calls", "invalid_tool_calls" and
// "usage_metadata" (null without Usage), for a tool message "tool_call_id", "artifact" and
// "status" ("success" unless StatusError). A Remove marker encodes as LangChain's
// RemoveMessage: the base keys, type "remove", its content empty.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Content: m.Content, AdditionalKwargs: orEmpty(m.AdditionalKwargs), ResponseMetadata: orEmpty(m.ResponseMetadata),
		Type: m.Type, Name: optString(m.Name), ID: optString(m.ID)}
	switch m.Type {
	case TypeRemove:
		w.Content = Content{}
	case TypeAI:
		calls := make([]wireToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			args := c.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			calls[i] = wireToolCall{Name: c.Name, Args: args, ID: optString(c.ID), Type: "tool_call"}
		}
		invalid := make([]wireInvalidCall, len(m.InvalidToolCalls))
		for i, c := range m.InvalidToolCalls {
			invalid[i] = wireInvalidCall{Type: "invalid_tool_call", ID: optString(c.ID), Name: optString(c.Name),
				Args: optString(c.Args), Error: optString(c.Error)}
		}
		w.ToolCalls, w.InvalidToolCalls = &calls, &invalid
		usage := jsonNull
		if m.Usage != nil {
			u := wireUsage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
				TotalTokens: m.Usage.InputTokens + m.Usage.OutputTokens}
			if m.Usage.CachedInputTokens != 0 {
				u.InputTokenDetails = &wireInDetail{CacheRead: m.Usage.CachedInputTokens}
			}
			b, err := json.Marshal(u)
			if err != nil {
				return nil, err
			}
			usage = b
		}
		w.UsageMetadata = &usage
	case TypeTool:
		status := m.Status
		if status == "" {
			status = StatusSuccess
		}
		id := m.ToolCallID
		artifact := jsonNull
		if len(m.Artifact) > 0 {
			artifact = m.Artifact
		}
		w.ToolCallID, w.Status, w.Artifact = &id, &status, &artifact
	}
	return json.Marshal(w)
}
