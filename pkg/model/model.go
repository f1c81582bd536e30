package model

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// Model is a chat model.
type Model interface {
	// Generate returns the model's reply to req: an AI message (its text, the tool calls it
	// asks for) with the tokens it cost. When req.OnText is set, the reply is streamed and
	// OnText gets each piece of its text as the vendor sends it; the reply returned is the
	// whole of it all the same. Errors: ctx's, the vendor's (wrapped, so errors.As finds the
	// SDK's error type), ErrRefused when the vendor declined the request for its content, and
	// OnText's own error, which ends the call.
	Generate(ctx context.Context, req Request) (Response, error)
}

// Request is what a model is asked.
type Request struct {
	// Messages are the conversation so far, system prompt first if there is one.
	Messages []message.Message
	// Tools are the tools the model may call; none, it only writes text.
	Tools []ToolDef
	// ToolChoice is "auto" (default, the model decides), "required" (it must call a tool),
	// "none", or a tool's name (it must call that one).
	ToolChoice string
	// Output, when set, asks for a final answer that is a JSON value of this schema
	// (structured output); the reply's text is that JSON.
	Output *OutputSchema
	// MaxTokens bounds the reply's tokens; 0 leaves it to the adapter's default.
	MaxTokens int64
	// Temperature is the sampling temperature; nil leaves it to the vendor.
	Temperature *float64
	// OnText, when set, streams the reply: it gets each piece of text in order.
	OnText func(text string) error
}

// ToolDef describes a tool to a model.
type ToolDef struct {
	// Name is the tool's name, the one the model's tool calls carry.
	Name string
	// Description says what the tool does and when to call it.
	Description string
	// Parameters is the JSON Schema of the tool's arguments, an object schema.
	Parameters json.RawMessage
}

// OutputSchema is the JSON Schema a structured answer must match.
type OutputSchema struct {
	// Name names the schema (vendors require one).
	Name string
	// Schema is the JSON Schema.
	Schema json.RawMessage
}

// Response is a model's reply.
type Response struct {
	// Message is the reply, of type message.TypeAI; its Usage is the call's usage too.
	Message message.Message
	// Usage is what the call cost.
	Usage message.Usage
	// StopReason is why the model stopped: "stop", "tool_calls", "length", as the adapter
	// maps the vendor's reason.
	StopReason string
	// Model is the model that answered, as the vendor names it.
	Model string
}

// The stop reasons adapters map their vendor's to.
const (
	StopEnd       = "stop"
	StopToolCalls = "tool_calls"
	StopLength    = "length"
)

// ErrRefused is returned when the vendor declined to answer for the request's content.
var ErrRefused = errors.New("model: the request was refused")
