package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// response maps a chat completion (its first choice) to the model's response: an AI
// message with its tool calls and usage, and the stop reason. A refusal, or a reply the
// content filter stopped, is model.ErrRefused.
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
		args := json.RawMessage(c.Function.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			return model.Response{}, fmt.Errorf("openai: completion %s: tool call %s (%s): arguments are not JSON: %q",
				cc.ID, c.ID, c.Function.Name, c.Function.Arguments)
		}
		reply.ToolCalls = append(reply.ToolCalls, message.ToolCall{ID: c.ID, Name: c.Function.Name, Args: args})
	}
	return model.Response{Message: reply, Usage: usage, StopReason: stopReason(choice.FinishReason, len(reply.ToolCalls) > 0), Model: cc.Model}, nil
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

// vendorError wraps an SDK error with the model's name. An error whose code is
// "content_filter" (Azure's filter of the prompt) is model.ErrRefused too.
func vendorError(name string, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Code == "content_filter" {
		return fmt.Errorf("openai: create chat completion model=%s: %w: %w", name, model.ErrRefused, err)
	}
	return fmt.Errorf("openai: create chat completion model=%s: %w", name, err)
}
