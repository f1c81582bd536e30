package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// params maps a request to the Messages API's. Temperature is not sent: API version
// 2026-10-21, which the SDK speaks, rejects sampling parameters (temperature, top_p, top_k)
// with a 400 whatever their value, and the SDK has no field for them.
func (m *Model) params(req model.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.model), MaxTokens: m.maxTokens}
	if req.MaxTokens > 0 {
		p.MaxTokens = req.MaxTokens
	}
	system, msgs, err := conversation(req.Messages)
	if err != nil {
		return p, err
	}
	p.System, p.Messages = system, msgs
	for _, t := range req.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	p.ToolChoice = toolChoice(req.ToolChoice)
	if req.Output != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Output.Schema, &schema); err != nil || schema == nil {
			return p, fmt.Errorf("anthropic: output schema %q is not a JSON object", req.Output.Name)
		}
		p.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	return p, nil
}

// toolParam maps a tool to a custom tool whose input_schema is its parameters as given.
func toolParam(t model.ToolDef) (sdk.ToolParam, error) {
	schema := t.Parameters
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return sdk.ToolParam{}, fmt.Errorf("anthropic: tool %q: parameters are not a JSON object schema", t.Name)
	}
	tp := sdk.ToolParam{Name: t.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return tp, nil
}

// toolChoice maps model.Request.ToolChoice: "" and "auto" to Anthropic's default (left
// out), "required" (and Anthropic's own "any") to any, "none" to none, another value to
// that tool.
func toolChoice(choice string) sdk.ToolChoiceUnionParam {
	switch choice {
	case "", "auto":
		return sdk.ToolChoiceUnionParam{}
	case "required", "any":
		return sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
	case "none":
		return sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	}
	return sdk.ToolChoiceParamOfTool(choice)
}

// conversation maps messages to the system parameter (every system message's text, in
// order) and the user and assistant turns: a human message and the tool messages are user
// content (a tool message a tool_result block, is_error for message.StatusError), an AI
// message assistant content (its text and thinking blocks, then a tool_use block per tool
// call). Consecutive messages of one role make one turn, so the results of one turn's tool
// calls go back in one user message as Anthropic requires; a turn left with no content (an
// AI message without text or calls) is dropped.
func conversation(msgs []message.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	var turns []sdk.MessageParam
	var role string
	var blocks []sdk.ContentBlockParamUnion
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		if role == "assistant" {
			turns = append(turns, sdk.NewAssistantMessage(blocks...))
		} else {
			turns = append(turns, sdk.NewUserMessage(blocks...))
		}
		blocks = nil
	}
	for i, msg := range msgs {
		var r string
		var bs []sdk.ContentBlockParamUnion
		var err error
		switch msg.Type {
		case message.TypeSystem:
			if text := msg.Text(); text != "" {
				system = append(system, sdk.TextBlockParam{Text: text})
			}
			continue
		case message.TypeHuman:
			r = "user"
			bs, err = contentBlocks(msg.Content)
		case message.TypeTool:
			var b sdk.ContentBlockParamUnion
			b, err = toolResult(msg)
			r, bs = "user", []sdk.ContentBlockParamUnion{b}
		case message.TypeAI:
			r = "assistant"
			bs, err = assistantBlocks(msg)
		default:
			err = fmt.Errorf("type %q is not one a model is sent", msg.Type)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if r != role {
			flush()
			role = r
		}
		blocks = append(blocks, bs...)
	}
	flush()
	return system, turns, nil
}

// assistantBlocks maps an AI message: its content's text and vendor blocks (thinking kept
// from an earlier reply), then its tool calls as tool_use blocks.
func assistantBlocks(msg message.Message) ([]sdk.ContentBlockParamUnion, error) {
	bs, err := contentBlocks(msg.Content)
	if err != nil {
		return nil, err
	}
	for _, c := range msg.ToolCalls {
		args := c.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		bs = append(bs, sdk.NewToolUseBlock(c.ID, args, c.Name))
	}
	// A call another vendor's reply could not parse has no input to send: it goes as a
	// tool_use with an empty input, so that the error tool_result answering it names a call.
	for _, c := range msg.InvalidToolCalls {
		if c.ID != "" {
			bs = append(bs, sdk.NewToolUseBlock(c.ID, json.RawMessage("{}"), c.Name))
		}
	}
	return bs, nil
}

// toolResult maps a tool message to a tool_result block: its text, or its text and image
// parts.
func toolResult(msg message.Message) (sdk.ContentBlockParamUnion, error) {
	tr := sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
	if msg.Status == message.StatusError {
		tr.IsError = param.NewOpt(true)
	}
	bs, err := contentBlocks(msg.Content)
	if err != nil {
		return sdk.ContentBlockParamUnion{}, err
	}
	for _, b := range bs {
		switch {
		case b.OfText != nil:
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: b.OfText})
		case b.OfImage != nil:
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
		case b.OfDocument != nil:
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfDocument: b.OfDocument})
		default:
			return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool result %s: only text, image and document parts go in a tool result", msg.ToolCallID)
		}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &tr}, nil
}
