package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// roles maps the role and type names a message dict may carry (LangChain's
// _create_message_from_message_type) to a message type.
var roles = map[string]string{
	"human": TypeHuman, "user": TypeHuman,
	"ai": TypeAI, "assistant": TypeAI,
	"system": TypeSystem, "developer": TypeSystem,
	"tool":   TypeTool,
	"remove": TypeRemove,
}

// classes maps the class names of LangChain's serialized form (the last element of its "id")
// to a message type; a chunk class is its message's type, as add_messages turns chunks into
// messages.
var classes = map[string]string{
	"HumanMessage": TypeHuman, "HumanMessageChunk": TypeHuman,
	"AIMessage": TypeAI, "AIMessageChunk": TypeAI,
	"SystemMessage": TypeSystem, "SystemMessageChunk": TypeSystem,
	"ToolMessage": TypeTool, "ToolMessageChunk": TypeTool,
	"RemoveMessage": TypeRemove,
}

// openAIRoleKey is where LangChain keeps a "developer" role on the system message it makes.
const openAIRoleKey = "__openai_role__"

// UnmarshalJSON decodes a message in any shape LangGraph's add_messages coerces
// (langchain-core's convert_to_messages):
//   - a dict with "role" (or, without one, "type") and "content": roles human/user,
//     ai/assistant, system/developer (a system message with additional_kwargs
//     {"__openai_role__": "developer"}), tool and remove. Its "tool_calls" may be LangChain's
//     ({"name", "args", "id"}) or OpenAI's ({"id", "function": {"name", "arguments"}}, the
//     arguments a JSON string or an object). Keys LangChain takes as fields (id, name,
//     tool_call_id, tool_calls, response_metadata, and for their types invalid_tool_calls,
//     usage_metadata, status, artifact) are fields; every other key joins additional_kwargs,
//     as LangChain puts it there; "example" is dropped;
//   - LangChain's serialized form {"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
//     "kwargs": {...}} (a chunk class gives its message);
//   - a bare string: a human message;
//   - a [role, content] pair (roles as above, not tool or remove).
//
// It rejects, with the reason, anything else: a dict without a role or type or without
// content, an unknown role (and "function", the legacy function message, which this package
// does not model), tool calls without a name or whose arguments are not a JSON object, and
// any message that fails Validate.
func (m *Message) UnmarshalJSON(data []byte) error {
	out, err := decodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return fmt.Errorf("message: %w", err)
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	*m = out
	return nil
}

func decodeMessage(data []byte) (Message, error) {
	if len(data) == 0 {
		return Message{}, fmt.Errorf("empty")
	}
	switch data[0] {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return Message{}, err
		}
		return Human(s), nil
	case '[':
		return decodePair(data)
	case '{':
	default:
		return Message{}, fmt.Errorf("want an object, a string or a [role, content] pair")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return Message{}, err
	}
	if isConstructor(obj) {
		return decodeConstructor(obj)
	}
	key := "role"
	rawType, ok := obj[key]
	if !ok {
		key = "type"
		if rawType, ok = obj[key]; !ok {
			return Message{}, fmt.Errorf("a message dict needs a role (or type) and content")
		}
	}
	var name string
	if err := json.Unmarshal(rawType, &name); err != nil {
		return Message{}, fmt.Errorf("%s must be a string", key)
	}
	delete(obj, key)
	typ, err := roleType(name)
	if err != nil {
		return Message{}, err
	}
	if _, ok := obj["content"]; !ok {
		return Message{}, fmt.Errorf("a message dict needs content (a %s message of role %q has none)", typ, name)
	}
	out, err := decodeFields(typ, obj, true)
	if err != nil {
		return Message{}, err
	}
	if name == "developer" {
		if out.AdditionalKwargs == nil {
			out.AdditionalKwargs = map[string]any{}
		}
		out.AdditionalKwargs[openAIRoleKey] = "developer"
	}
	return out, nil
}

// roleType returns the message type of a dict's role or type, or why there is none.
func roleType(name string) (string, error) {
	if typ, ok := roles[name]; ok {
		return typ, nil
	}
	if name == "function" {
		return "", fmt.Errorf("function messages (LangChain's legacy FunctionMessage) are not supported: send a tool message")
	}
	return "", fmt.Errorf("unknown role %q (want human, user, ai, assistant, system, developer, tool or remove)", name)
}

// decodePair decodes a [role, content] pair.
func decodePair(data []byte) (Message, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
		return Message{}, fmt.Errorf("a list must be a [role, content] pair")
	}
	var role string
	if err := json.Unmarshal(pair[0], &role); err != nil {
		return Message{}, fmt.Errorf("the role of a [role, content] pair must be a string")
	}
	typ, err := roleType(role)
	if err != nil {
		return Message{}, err
	}
	if typ == TypeTool || typ == TypeRemove {
		return Message{}, fmt.Errorf("a [role, content] pair cannot be a %s message (it needs an id)", typ)
	}
	var c Content
	if err := c.UnmarshalJSON(pair[1]); err != nil {
		return Message{}, err
	}
	out := Message{Type: typ, Content: c}
	if role == "developer" {
		out.AdditionalKwargs = map[string]any{openAIRoleKey: "developer"}
	}
	return out, nil
}

// isConstructor reports whether obj is LangChain's serialized form of an object.
func isConstructor(obj map[string]json.RawMessage) bool {
	_, lc := obj["lc"]
	_, kw := obj["kwargs"]
	return lc && kw && bytes.Equal(bytes.TrimSpace(obj["type"]), []byte(`"constructor"`))
}

// decodeConstructor decodes LangChain's serialized form: the class in "id", the fields in
// "kwargs".
func decodeConstructor(obj map[string]json.RawMessage) (Message, error) {
	var id []string
	if err := json.Unmarshal(obj["id"], &id); err != nil || len(id) == 0 {
		return Message{}, fmt.Errorf("a serialized message needs its class in id")
	}
	typ, ok := classes[id[len(id)-1]]
	if !ok {
		return Message{}, fmt.Errorf("unknown message class %q", strings.Join(id, "."))
	}
	var kwargs map[string]json.RawMessage
	if err := json.Unmarshal(obj["kwargs"], &kwargs); err != nil {
		return Message{}, fmt.Errorf("kwargs: %w", err)
	}
	delete(kwargs, "type")
	return decodeFields(typ, kwargs, false)
}

// decodeFields decodes the fields of a message of type typ from obj (its type key removed).
// loose (a message dict) puts the keys that are no field of typ into additional_kwargs, as
// LangChain does; otherwise (constructor kwargs) they are dropped.
func decodeFields(typ string, obj map[string]json.RawMessage, loose bool) (Message, error) {
	out := Message{Type: typ}
	take := func(k string) (json.RawMessage, bool) {
		v, ok := obj[k]
		delete(obj, k)
		if ok && bytes.Equal(bytes.TrimSpace(v), jsonNull) {
			return nil, false
		}
		return v, ok
	}
	if v, ok := take("content"); ok {
		if err := out.Content.UnmarshalJSON(v); err != nil {
			return Message{}, err
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &out.ID}, {"name", &out.Name}} {
		if v, ok := take(f.key); ok {
			if err := json.Unmarshal(v, f.dst); err != nil {
				return Message{}, fmt.Errorf("%s must be a string", f.key)
			}
		}
	}
	if v, ok := take("response_metadata"); ok {
		if err := decodeMap(v, &out.ResponseMetadata); err != nil {
			return Message{}, fmt.Errorf("response_metadata: %w", err)
		}
	}
	var nested map[string]any
	if v, ok := take("additional_kwargs"); ok {
		if err := decodeMap(v, &nested); err != nil {
			return Message{}, fmt.Errorf("additional_kwargs: %w", err)
		}
	}
	delete(obj, "example") // LangChain 1.x has no example field
	switch typ {
	case TypeAI:
		if err := decodeAIFields(&out, take); err != nil {
			return Message{}, err
		}
	case TypeTool:
		if err := decodeToolFields(&out, take); err != nil {
			return Message{}, err
		}
	}
	// Fields of another type (tool_calls on a human message) are no field of this one.
	for _, k := range []string{"tool_call_id", "tool_calls"} {
		delete(obj, k)
	}
	kwargs := map[string]any{}
	if loose {
		for k, v := range obj {
			var x any
			if err := json.Unmarshal(v, &x); err != nil {
				return Message{}, fmt.Errorf("%s: %w", k, err)
			}
			kwargs[k] = x
		}
	}
	for k, v := range nested { // LangChain: additional_kwargs.update(additional_kwargs.pop("additional_kwargs"))
		kwargs[k] = v
	}
	if len(kwargs) > 0 {
		out.AdditionalKwargs = kwargs
	}
	if len(out.ResponseMetadata) == 0 {
		out.ResponseMetadata = nil
	}
	if typ == TypeRemove {
		out.Content = Content{} // RemoveMessage keeps no content
	}
	return out, nil
}

// decodeMap decodes a JSON object into *dst; null leaves it nil.
func decodeMap(v json.RawMessage, dst *map[string]any) error {
	if len(v) == 0 || v[0] != '{' {
		return fmt.Errorf("must be an object")
	}
	return json.Unmarshal(v, dst)
}

func decodeAIFields(out *Message, take func(string) (json.RawMessage, bool)) error {
	if v, ok := take("tool_calls"); ok {
		calls, err := decodeToolCalls(v)
		if err != nil {
			return err
		}
		out.ToolCalls = calls
	}
	if v, ok := take("invalid_tool_calls"); ok {
		var items []struct {
			ID, Name, Args, Error *string
		}
		if err := json.Unmarshal(v, &items); err != nil {
			return fmt.Errorf("invalid_tool_calls: %w", err)
		}
		for _, it := range items {
			out.InvalidToolCalls = append(out.InvalidToolCalls, InvalidToolCall{ID: deref(it.ID), Name: deref(it.Name),
				Args: deref(it.Args), Error: deref(it.Error)})
		}
	}
	if v, ok := take("usage_metadata"); ok {
		var u struct {
			InputTokens       int64 `json:"input_tokens"`
			OutputTokens      int64 `json:"output_tokens"`
			InputTokenDetails *struct {
				CacheRead int64 `json:"cache_read"`
			} `json:"input_token_details"`
		}
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("usage_metadata: %w", err)
		}
		out.Usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
		if u.InputTokenDetails != nil {
			out.Usage.CachedInputTokens = u.InputTokenDetails.CacheRead
		}
	}
	return nil
}

func decodeToolFields(out *Message, take func(string) (json.RawMessage, bool)) error {
	if v, ok := take("tool_call_id"); ok {
		if err := json.Unmarshal(v, &out.ToolCallID); err != nil {
			return fmt.Errorf("tool_call_id must be a string")
		}
	}
	if v, ok := take("status"); ok {
		if err := json.Unmarshal(v, &out.Status); err != nil {
			return fmt.Errorf("status must be a string")
		}
	}
	if v, ok := take("artifact"); ok {
		raw, err := canonical(v)
		if err != nil {
			return fmt.Errorf("artifact: %w", err)
		}
		out.Artifact = raw
	}
	if out.Status == "" {
		out.Status = StatusSuccess // LangChain's default
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// decodeToolCalls decodes LangChain's tool calls ({"name", "args", "id"}) and OpenAI's
// ({"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}); the arguments
// must be a JSON object (an empty arguments string is {}).
func decodeToolCalls(raw json.RawMessage) ([]ToolCall, error) {
	var items []struct {
		ID       *string         `json:"id"`
		Name     *string         `json:"name"`
		Args     json.RawMessage `json:"args"`
		Function *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("tool_calls: %w", err)
	}
	if len(items) == 0 {
		return nil, nil
	}
	calls := make([]ToolCall, len(items))
	for i, it := range items {
		c := ToolCall{ID: deref(it.ID), Name: deref(it.Name), Args: it.Args}
		if it.Function != nil {
			c.Name = it.Function.Name
			c.Args = it.Function.Arguments
			var s string
			if len(c.Args) > 0 && c.Args[0] == '"' { // OpenAI's arguments: a JSON string
				if err := json.Unmarshal(c.Args, &s); err != nil {
					return nil, fmt.Errorf("tool call %d (%s): arguments: %w", i, c.Name, err)
				}
				if s = strings.TrimSpace(s); s == "" {
					s = "{}"
				}
				c.Args = json.RawMessage(s)
			}
		}
		if c.Name == "" {
			return nil, fmt.Errorf("tool call %d: name required", i)
		}
		if !isObject(c.Args) {
			return nil, fmt.Errorf("tool call %d (%s): args must be a JSON object", i, c.Name)
		}
		args, err := canonical(c.Args)
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): %w", i, c.Name, err)
		}
		c.Args = args
		calls[i] = c
	}
	return calls, nil
}
