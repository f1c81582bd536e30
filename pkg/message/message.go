package message

import (
	"encoding/json"
	"fmt"
)

// The message types, as LangChain names them.
const (
	// TypeHuman is a user's message.
	TypeHuman = "human"
	// TypeAI is a model's reply, with the tool calls it asks for.
	TypeAI = "ai"
	// TypeSystem is a system prompt.
	TypeSystem = "system"
	// TypeTool is the result of one tool call, answering it by ToolCallID.
	TypeTool = "tool"
	// TypeRemove marks the message with its ID for removal (Add); it is never stored.
	TypeRemove = "remove"
)

// RemoveAll is the ID of a Remove marker that clears the list: the messages after it are
// the list's new content.
const RemoveAll = "__remove_all__"

// The status of a tool message.
const (
	// StatusSuccess is a tool call that returned a result.
	StatusSuccess = "success"
	// StatusError is a tool call whose error is the content.
	StatusError = "error"
)

// Message is one chat message. The zero value is not a valid message: Type is required.
type Message struct {
	// Type is TypeHuman, TypeAI, TypeSystem or TypeTool (or TypeRemove in an update).
	Type string
	// Content is the text, or the parts, of the message.
	Content Content
	// ID names the message within a conversation; Add replaces a message by it. Empty, Add
	// gives the message one.
	ID string
	// Name is an optional name of the author (a tool message: the tool's name).
	Name string
	// ToolCalls are the calls an AI message asks for.
	ToolCalls []ToolCall
	// InvalidToolCalls are the calls of an AI message that the model's vendor could not
	// parse (arguments that are not JSON), kept as LangChain keeps them.
	InvalidToolCalls []InvalidToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// Status is a tool message's StatusSuccess (the default) or StatusError.
	Status string
	// Artifact is what a tool returned beside its content, not meant for the model (a tool
	// message's "artifact"): any JSON, nil for none.
	Artifact json.RawMessage
	// Usage is the tokens the model spent on an AI message, when it reported them.
	Usage *Usage
	// ResponseMetadata is what the model's vendor said about the reply (model name, stop
	// reason), as LangChain keeps it.
	ResponseMetadata map[string]any
	// AdditionalKwargs holds vendor fields LangChain keeps beside the content.
	AdditionalKwargs map[string]any
}

// ToolCall is a call of a tool an AI message asks for.
type ToolCall struct {
	// ID names the call; the tool message answering it carries it as ToolCallID. LangChain
	// allows a call without one (its id is null); such a call cannot be answered.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Args are the call's arguments, a JSON object.
	Args json.RawMessage `json:"args"`
}

// InvalidToolCall is a tool call the model's vendor returned but could not parse.
type InvalidToolCall struct {
	// ID names the call, when the vendor gave it one.
	ID string
	// Name is the tool's name, when known.
	Name string
	// Args are the arguments as the model wrote them (not valid JSON, or not an object).
	Args string
	// Error says what was wrong with the call.
	Error string
}

// Usage is what a model reply cost in tokens. On its own it encodes with this package's keys
// (input_tokens, output_tokens, cached_input_tokens); in an AI message, as LangChain's
// usage_metadata (total_tokens, input_token_details.cache_read).
type Usage struct {
	// InputTokens are the prompt's tokens, cached ones included.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens are the reply's tokens.
	OutputTokens int64 `json:"output_tokens"`
	// CachedInputTokens are the input tokens read from the vendor's prompt cache.
	CachedInputTokens int64 `json:"cached_input_tokens"`
}

// Add returns u plus v, field by field.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens}
}

// Human returns a human message with text content.
func Human(text string) Message { return Message{Type: TypeHuman, Content: Text(text)} }

// System returns a system message with text content.
func System(text string) Message { return Message{Type: TypeSystem, Content: Text(text)} }

// AI returns an AI message with text content and the tool calls it asks for.
func AI(text string, calls ...ToolCall) Message {
	return Message{Type: TypeAI, Content: Text(text), ToolCalls: calls}
}

// ToolResult returns the tool message answering call with text.
func ToolResult(call ToolCall, text string) Message {
	return Message{Type: TypeTool, Content: Text(text), ToolCallID: call.ID, Name: call.Name, Status: StatusSuccess}
}

// ToolError returns the tool message telling the model that call failed with text.
func ToolError(call ToolCall, text string) Message {
	return Message{Type: TypeTool, Content: Text(text), ToolCallID: call.ID, Name: call.Name, Status: StatusError}
}

// Remove returns the marker that removes the message with id when Add merges it (RemoveAll
// clears the list).
func Remove(id string) Message { return Message{Type: TypeRemove, ID: id} }

// Text returns the message's text: its text content, or its text parts joined.
func (m Message) Text() string { return m.Content.String() }

// Validate reports what makes m not a message Add stores: an unknown type, a tool message
// without the call it answers or with a status other than StatusSuccess or StatusError, a
// tool call without a name or with arguments that are not a JSON object, a Remove marker
// without an ID.
func (m Message) Validate() error {
	switch m.Type {
	case TypeHuman, TypeAI, TypeSystem:
	case TypeTool:
		if m.ToolCallID == "" {
			return fmt.Errorf("tool message: tool_call_id required")
		}
		if m.Status != "" && m.Status != StatusSuccess && m.Status != StatusError {
			return fmt.Errorf("tool message: status %q is not %q or %q", m.Status, StatusSuccess, StatusError)
		}
	case TypeRemove:
		if m.ID == "" {
			return fmt.Errorf("remove: id required")
		}
	case "":
		return fmt.Errorf("message type required")
	default:
		return fmt.Errorf("unknown message type %q", m.Type)
	}
	for i, c := range m.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d: name required", i)
		}
		if !isObject(c.Args) {
			return fmt.Errorf("tool call %d (%s): args must be a JSON object", i, c.Name)
		}
	}
	return nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return json.Valid(raw)
		}
		return false
	}
	return false
}
