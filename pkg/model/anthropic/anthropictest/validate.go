package anthropictest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// samplingVersion is the API version from which sampling parameters are rejected.
const samplingVersion = "2026-10-21"

// validate returns why Anthropic would reject req (sent with the API version), or "".
func validate(req *Request, version string) string {
	if req.Model == "" {
		return "model: Field required"
	}
	if req.MaxTokens == nil {
		return "max_tokens: Field required"
	}
	if len(req.Messages) == 0 {
		return "messages: at least one message is required"
	}
	if version >= samplingVersion {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(req.Body, &fields)
		for _, k := range []string{"temperature", "top_p", "top_k"} {
			if _, ok := fields[k]; ok {
				return k + ": Extra inputs are not permitted"
			}
		}
	}
	for i, b := range req.System {
		if b.Type != "text" || b.Text == "" {
			return fmt.Sprintf("system.%d: a system block is a non-empty text block", i)
		}
	}
	for i := range req.Messages {
		if reason := validateMessage(req.Messages, i); reason != "" {
			return fmt.Sprintf("messages.%d: %s", i, reason)
		}
	}
	return ""
}

// validateMessage returns why message i of msgs breaks Anthropic's rules, or "".
func validateMessage(msgs []InMessage, i int) string {
	m := msgs[i]
	if m.Role != "user" && m.Role != "assistant" {
		return fmt.Sprintf("role %q: expected user or assistant", m.Role)
	}
	if len(m.Content) == 0 {
		return "content: a message needs at least one content block"
	}
	seenOther := false
	for j, b := range m.Content {
		switch {
		case b.Type == "text" && b.Text == "":
			return fmt.Sprintf("content.%d: text content blocks must be non-empty", j)
		case b.Type == "tool_result" && m.Role != "user":
			return fmt.Sprintf("content.%d: tool_result blocks are only allowed in user messages", j)
		case b.Type == "tool_result" && seenOther:
			return fmt.Sprintf("content.%d: tool_result blocks must come first in a user message", j)
		case b.Type == "tool_use" && m.Role != "assistant":
			return fmt.Sprintf("content.%d: tool_use blocks are only allowed in assistant messages", j)
		case b.Type == "tool_use" && (b.ID == "" || b.Name == "" || !isObject(b.Input)):
			return fmt.Sprintf("content.%d: a tool_use block needs an id, a name and an object input", j)
		case b.Type != "tool_result":
			seenOther = true
		}
	}
	if m.Role != "assistant" {
		return ""
	}
	var ids []string
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			ids = append(ids, b.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	answered := map[string]bool{}
	if i+1 < len(msgs) && msgs[i+1].Role == "user" {
		for _, b := range msgs[i+1].Content {
			if b.Type == "tool_result" {
				answered[b.ToolUseID] = true
			}
		}
	}
	var missing []string
	for _, id := range ids {
		if !answered[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return "tool_use ids were found without tool_result blocks immediately after: " + strings.Join(missing, ", ")
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}
