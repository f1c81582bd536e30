package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// params maps req to the SDK's chat completion parameters.
func (m *Model) params(req model.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: m.model}
	for i, msg := range req.Messages {
		u, err := messageParam(msg)
		if err != nil {
			return p, fmt.Errorf("openai: message %d (%s): %w", i, msg.Type, err)
		}
		p.Messages = append(p.Messages, u)
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &fn.Parameters); err != nil {
				return p, fmt.Errorf("openai: tool %s: parameters: %w", t.Name, err)
			}
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none":
		if len(req.Tools) > 0 { // the API refuses a tool_choice without tools
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
		}
	case "required":
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
	default:
		p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice})
	}
	if o := req.Output; o != nil {
		if !json.Valid(o.Schema) {
			return p, fmt.Errorf("openai: output %s: schema is not JSON", o.Name)
		}
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: o.Name, Strict: openai.Bool(true), Schema: o.Schema},
		}}
	}
	if n := req.MaxTokens; n > 0 {
		p.MaxCompletionTokens = openai.Int(n)
	} else if m.maxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(m.maxTokens)
	}
	if t := req.Temperature; t != nil {
		p.Temperature = openai.Float(*t)
	}
	return p, nil
}

// messageParam maps a message to the SDK's: system, user (text or parts), assistant (text
// and tool calls) or tool (a result).
func messageParam(m message.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Type {
	case message.TypeSystem:
		if err := textOnly(m.Content); err != nil {
			return openai.ChatCompletionMessageParamUnion{}, err
		}
		return openai.SystemMessage(m.Text()), nil
	case message.TypeHuman:
		u := openai.UserMessage(m.Text())
		if m.Content.IsParts() {
			parts, err := userParts(m.Content.PartList())
			if err != nil {
				return u, err
			}
			u = openai.UserMessage(parts)
		}
		if m.Name != "" {
			u.OfUser.Name = openai.String(m.Name)
		}
		return u, nil
	case message.TypeAI:
		if err := textOnly(m.Content, otherVendorsAIParts...); err != nil {
			return openai.ChatCompletionMessageParamUnion{}, err
		}
		var a openai.ChatCompletionAssistantMessageParam
		if text := m.Text(); text != "" || len(m.ToolCalls)+len(m.InvalidToolCalls) == 0 {
			a.Content.OfString = openai.String(text)
		}
		if m.Name != "" {
			a.Name = openai.String(m.Name)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Args)
			if len(c.Args) == 0 {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args}},
			})
		}
		// A call the reply could not parse goes back as the model wrote it, so that the
		// error tool message answering it names a call of this message.
		for _, c := range m.InvalidToolCalls {
			if c.ID == "" {
				continue
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args}},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case message.TypeTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message: tool_call_id required")
		}
		if err := textOnly(m.Content); err != nil {
			return openai.ChatCompletionMessageParamUnion{}, err
		}
		return openai.ToolMessage(m.Text(), m.ToolCallID), nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("message type %q has no OpenAI role", m.Type)
}

// otherVendorsAIParts are the parts of an AI message that another vendor's model wrote
// (Anthropic's thinking and tool_use blocks, a reasoning block) and that an AI message sent
// to this API leaves out, as langchain-openai does: the text is sent, and the tool calls as
// the message's tool_calls. A conversation can so move from one vendor's model to OpenAI's.
var otherVendorsAIParts = []string{"thinking", "redacted_thinking", "reasoning", "reasoning_content", "tool_use"}

// textOnly reports a part that is neither text nor of a type in skip: the API takes only
// text from a system, an assistant or a tool message.
func textOnly(c message.Content, skip ...string) error {
	for i, p := range c.PartList() {
		if p.Type != "text" && !slices.Contains(skip, p.Type) {
			return fmt.Errorf("content part %d: a %q part is not supported here, only text", i, p.Type)
		}
	}
	return nil
}

// userParts maps a user message's parts: text, images (OpenAI's image_url, its URL as a
// string or an object, or LangChain's standard image block with a URL or base64 data), and
// any other part the SDK knows by its OpenAI type (input_audio, file), passed as it is.
func userParts(parts []message.Part) ([]openai.ChatCompletionContentPartUnionParam, error) {
	out := make([]openai.ChatCompletionContentPartUnionParam, 0, len(parts))
	for i, p := range parts {
		if p.Type == "text" {
			out = append(out, openai.TextContentPart(p.Text))
			continue
		}
		u, err := userPart(p)
		if err != nil {
			return nil, fmt.Errorf("content part %d (%s): %w", i, p.Type, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// userPart maps one non-text part.
func userPart(p message.Part) (openai.ChatCompletionContentPartUnionParam, error) {
	var v struct {
		ImageURL   json.RawMessage `json:"image_url"`
		URL        string          `json:"url"`
		Base64     string          `json:"base64"`
		Data       string          `json:"data"`
		MimeType   string          `json:"mime_type"`
		SourceType string          `json:"source_type"`
		Detail     string          `json:"detail"`
	}
	if err := json.Unmarshal(p.Raw, &v); err != nil {
		return openai.ChatCompletionContentPartUnionParam{}, err
	}
	switch p.Type {
	case "image_url":
		var url string
		if json.Unmarshal(v.ImageURL, &url) == nil {
			return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}), nil
		}
		var img openai.ChatCompletionContentPartImageImageURLParam
		if err := json.Unmarshal(v.ImageURL, &img); err != nil || img.URL == "" {
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image_url: a URL or {\"url\": …} required")
		}
		return openai.ImageContentPart(img), nil
	case "image":
		url := v.URL
		if data := firstNonEmpty(v.Base64, v.Data); url == "" && data != "" {
			if v.MimeType == "" {
				return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image: base64 data needs a mime_type")
			}
			url = "data:" + v.MimeType + ";base64," + data
		} else if url == "" && v.SourceType == "url" {
			url = v.Data
		}
		if url == "" {
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image: a url or base64 data required")
		}
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url, Detail: v.Detail}), nil
	}
	var u openai.ChatCompletionContentPartUnionParam
	if err := json.Unmarshal(p.Raw, &u); err != nil {
		return u, err
	}
	if u.OfInputAudio == nil && u.OfFile == nil {
		return u, fmt.Errorf("a %q part is not supported by the Chat Completions API", p.Type)
	}
	return u, nil
}

// firstNonEmpty returns the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
