package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// response maps a chat completion (its first choice) to the model's response: an AI
// message with its tool calls and usage, and the stop reason. A tool call without a name or
// whose arguments are not a JSON object (a reply cut at its length, a model's slip) is one
// of the message's InvalidToolCalls, as LangChain keeps it, not an error: the reply was
// paid for, and the caller decides. A refusal, or a reply the content filter stopped, is
// model.ErrRefused.
func response(cc *openai.ChatCompletion) (model.Response, error) {
	if len(cc.Choices) == 0 {
		return model.Response{}, fmt.Errorf("openai: completion %s has no choice", cc.ID)
	}
	choice := cc.Choices[0]
	msg := choice.Message
	if msg.Refusal != "" {
		return model.Response{}, fmt.Errorf("openai: completion %s: %w: %s", cc.ID, model.ErrRefused, msg.Refusal)
	}
	if choice.FinishReason == "content_filter" {
		return model.Response{}, fmt.Errorf("openai: completion %s: %w: stopped by the content filter", cc.ID, model.ErrRefused)
	}
	usage := message.Usage{
		InputTokens:       cc.Usage.PromptTokens,
		OutputTokens:      cc.Usage.CompletionTokens,
		CachedInputTokens: cc.Usage.PromptTokensDetails.CachedTokens,
	}
	reply := message.Message{
		Type:    message.TypeAI,
		Content: message.Text(msg.Content),
		ID:      cc.ID,
		Usage:   &usage,
		ResponseMetadata: map[string]any{
			"model_name": cc.Model, "finish_reason": choice.FinishReason, "model_provider": "openai",
		},
	}
	for _, c := range msg.ToolCalls {
		if c.Type != "function" {
			return model.Response{}, fmt.Errorf("openai: completion %s: tool call %s of type %q is not supported", cc.ID, c.ID, c.Type)
		}
		args := c.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if c.Function.Name == "" || !object(args) {
			reply.InvalidToolCalls = append(reply.InvalidToolCalls, message.InvalidToolCall{ID: c.ID, Name: c.Function.Name,
				Args: c.Function.Arguments, Error: invalidCall(c.Function.Name, args)})
			continue
		}
		reply.ToolCalls = append(reply.ToolCalls, message.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(args)})
	}
	calls := len(reply.ToolCalls) + len(reply.InvalidToolCalls)
	return model.Response{Message: reply, Usage: usage, StopReason: stopReason(choice.FinishReason, calls > 0), Model: cc.Model}, nil
}

// object reports whether s is a JSON object.
func object(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

// invalidCall says what is wrong with a tool call that is not a message.ToolCall.
func invalidCall(name, args string) string {
	if name == "" {
		return "the tool call has no function name"
	}
	if !json.Valid([]byte(args)) {
		return fmt.Sprintf("function %s: the arguments are not valid JSON", name)
	}
	return fmt.Sprintf("function %s: the arguments are not a JSON object", name)
}

// stopReason maps a finish reason. A reply with tool calls stopped for them whatever its
// reason says, but for its length: the API says "stop" when tool_choice named the tool.
func stopReason(finish string, toolCalls bool) string {
	switch {
	case finish == "length":
		return model.StopLength
	case toolCalls || finish == "tool_calls" || finish == "function_call":
		return model.StopToolCalls
	}
	return model.StopEnd
}

// vendorError wraps an SDK error with the model's name: *openai.Error for an HTTP error,
// *ssestream.StreamError for an error the API sent in the middle of a stream. An error whose
// code is "content_filter" (Azure's filter of the prompt) is model.ErrRefused too.
func vendorError(name string, err error) error {
	if errorCode(err) == "content_filter" {
		return fmt.Errorf("openai: create chat completion model=%s: %w: %w", name, model.ErrRefused, err)
	}
	return fmt.Errorf("openai: create chat completion model=%s: %w", name, err)
}

// errorCode returns the code of the API's error err: an HTTP error's, or that of an error
// event of a stream; "" for another error.
func errorCode(err error) string {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(streamErr.Event.Data, &e) == nil {
			return e.Error.Code
		}
	}
	return ""
}
