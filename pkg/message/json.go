package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// wireMessage is a message as LangChain serializes it into a graph's state, its keys in
// LangChain's order. Pointers and the omitempty fields leave out what a type lacks.
type wireMessage struct {
	Content          Content          `json:"content"`
	AdditionalKwargs map[string]any   `json:"additional_kwargs"`
	ResponseMetadata map[string]any   `json:"response_metadata"`
	Type             string           `json:"type"`
	Name             *string          `json:"name"`
	ID               *string          `json:"id"`
	Example          *bool            `json:"example,omitempty"`
	ToolCalls        *[]wireToolCall  `json:"tool_calls,omitempty"`
	InvalidToolCalls *[]any           `json:"invalid_tool_calls,omitempty"`
	UsageMetadata    *json.RawMessage `json:"usage_metadata,omitempty"`
	ToolCallID       *string          `json:"tool_call_id,omitempty"`
	Artifact         *json.RawMessage `json:"artifact,omitempty"`
	Status           *string          `json:"status,omitempty"`
}

type wireToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id"`
	Type string          `json:"type"`
}

type wireUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
	InputTokenDetails struct {
		CacheRead int64 `json:"cache_read"`
	} `json:"input_token_details"`
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

// MarshalJSON encodes m as LangChain serializes a message of its type in a graph's state.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Type == TypeRemove {
		return json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}{TypeRemove, m.ID})
	}
	w := wireMessage{Content: m.Content, AdditionalKwargs: orEmpty(m.AdditionalKwargs), ResponseMetadata: orEmpty(m.ResponseMetadata),
		Type: m.Type, Name: optString(m.Name), ID: optString(m.ID)}
	f := false
	switch m.Type {
	case TypeHuman:
		w.Example = &f
	case TypeAI:
		w.Example = &f
		calls := make([]wireToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			args := c.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			calls[i] = wireToolCall{Name: c.Name, Args: args, ID: c.ID, Type: "tool_call"}
		}
		invalid := []any{}
		w.ToolCalls, w.InvalidToolCalls = &calls, &invalid
		usage := jsonNull
		if m.Usage != nil {
			u := wireUsage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
				TotalTokens: m.Usage.InputTokens + m.Usage.OutputTokens}
			u.InputTokenDetails.CacheRead = m.Usage.CachedInputTokens
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
		w.ToolCallID, w.Status, w.Artifact = &id, &status, &jsonNull
	}
	return json.Marshal(w)
}

// inMessage is every field a message on input may carry, in any of the shapes accepted.
type inMessage struct {
	Type       string           `json:"type"`
	Role       string           `json:"role"`
	Content    json.RawMessage  `json:"content"`
	ID         *string          `json:"id"`
	Name       *string          `json:"name"`
	RawCalls   json.RawMessage  `json:"tool_calls"`
	ToolCallID *string          `json:"tool_call_id"`
	Status     *string          `json:"status"`
	Usage      *wireUsage       `json:"usage_metadata"`
	Response   map[string]any   `json:"response_metadata"`
	Kwargs     map[string]any   `json:"additional_kwargs"`
	LCKwargs   *json.RawMessage `json:"kwargs"`
}

// kinds maps the type and role names LangChain accepts on input to a message type.
var kinds = map[string]string{
	"human": TypeHuman, "user": TypeHuman, "HumanMessage": TypeHuman, "HumanMessageChunk": TypeHuman,
	"ai": TypeAI, "assistant": TypeAI, "AIMessage": TypeAI, "AIMessageChunk": TypeAI,
	"system": TypeSystem, "developer": TypeSystem, "SystemMessage": TypeSystem,
	"tool": TypeTool, "ToolMessage": TypeTool,
	"remove": TypeRemove, "RemoveMessage": TypeRemove,
}

// UnmarshalJSON decodes a message in any shape LangGraph accepts on input: LangChain's
// {"type": …} dict, OpenAI's {"role": …} dict (its "function" tool calls' arguments a JSON
// string), LangChain's serialized constructor form, a bare string (a human message), or a
// [role, content] pair.
func (m *Message) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("message: empty")
	}
	switch data[0] {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*m = Human(s)
		return nil
	case '[':
		var pair []json.RawMessage
		if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
			return fmt.Errorf("message: a list must be a [role, content] pair")
		}
		var role string
		if err := json.Unmarshal(pair[0], &role); err != nil {
			return fmt.Errorf("message: the role of a [role, content] pair must be a string")
		}
		typ, ok := kinds[role]
		if !ok || typ == TypeRemove || typ == TypeTool {
			return fmt.Errorf("message: unknown role %q", role)
		}
		var c Content
		if err := c.UnmarshalJSON(pair[1]); err != nil {
			return fmt.Errorf("message: %w", err)
		}
		*m = Message{Type: typ, Content: c}
		return nil
	case '{':
	default:
		return fmt.Errorf("message: want an object, a string or a [role, content] pair")
	}
	var in inMessage
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	if in.Type == "constructor" && in.LCKwargs != nil { // LangChain's serialized form
		var lc struct {
			ID []string `json:"id"`
		}
		if err := json.Unmarshal(data, &lc); err != nil || len(lc.ID) == 0 {
			return fmt.Errorf("message: a serialized message needs its class in id")
		}
		var inner inMessage
		if err := json.Unmarshal(*in.LCKwargs, &inner); err != nil {
			return fmt.Errorf("message: kwargs: %w", err)
		}
		inner.Type = lc.ID[len(lc.ID)-1]
		in = inner
	}
	name := in.Type
	if name == "" {
		name = in.Role
	}
	typ, ok := kinds[name]
	if !ok {
		if name == "" {
			return fmt.Errorf("message: type or role required")
		}
		return fmt.Errorf("message: unknown type %q", name)
	}
	out := Message{Type: typ, ResponseMetadata: in.Response, AdditionalKwargs: in.Kwargs}
	if len(out.ResponseMetadata) == 0 {
		out.ResponseMetadata = nil
	}
	if len(out.AdditionalKwargs) == 0 {
		out.AdditionalKwargs = nil
	}
	if in.ID != nil {
		out.ID = *in.ID
	}
	if in.Name != nil {
		out.Name = *in.Name
	}
	if in.ToolCallID != nil {
		out.ToolCallID = *in.ToolCallID
	}
	if in.Status != nil {
		out.Status = *in.Status
	}
	if in.Usage != nil {
		out.Usage = &Usage{InputTokens: in.Usage.InputTokens, OutputTokens: in.Usage.OutputTokens, CachedInputTokens: in.Usage.InputTokenDetails.CacheRead}
	}
	if len(in.Content) > 0 {
		if err := out.Content.UnmarshalJSON(in.Content); err != nil {
			return fmt.Errorf("message: %w", err)
		}
	}
	if len(in.RawCalls) > 0 && !bytes.Equal(bytes.TrimSpace(in.RawCalls), jsonNull) {
		calls, err := decodeToolCalls(in.RawCalls)
		if err != nil {
			return fmt.Errorf("message: %w", err)
		}
		out.ToolCalls = calls
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	*m = out
	return nil
}

// decodeToolCalls decodes LangChain's tool calls ({"name", "args", "id"}) and OpenAI's
// ({"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}).
func decodeToolCalls(raw json.RawMessage) ([]ToolCall, error) {
	var items []struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Args     json.RawMessage `json:"args"`
		Function *struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("tool_calls: %w", err)
	}
	calls := make([]ToolCall, len(items))
	for i, it := range items {
		c := ToolCall{ID: it.ID, Name: it.Name, Args: it.Args}
		if it.Function != nil {
			c.Name = it.Function.Name
			args := strings.TrimSpace(it.Function.Arguments)
			if args == "" {
				args = "{}"
			}
			c.Args = json.RawMessage(args)
		}
		if len(c.Args) == 0 || bytes.Equal(bytes.TrimSpace(c.Args), jsonNull) {
			c.Args = json.RawMessage("{}")
		}
		if !isObject(c.Args) {
			return nil, fmt.Errorf("tool call %d (%s): args must be a JSON object", i, c.Name)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, c.Args); err != nil {
			return nil, fmt.Errorf("tool call %d (%s): %w", i, c.Name, err)
		}
		c.Args = buf.Bytes()
		calls[i] = c
	}
	return calls, nil
}
