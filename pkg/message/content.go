package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Content is a message's content: a text, or a list of parts (text, images, vendor blocks)
// as LangChain and OpenAI carry multimodal content. It encodes as a JSON string when it has
// no parts, else as the list.
type Content struct {
	text  string
	parts []Part
}

// Part is one part of a list content. Type "text" carries Text; every other part, and a text
// part with more than its type and text, is kept as the JSON it came as (Raw), so content a
// model or a client sent goes back unchanged.
type Part struct {
	// Type is the part's type: "text", "image_url", a vendor's block type.
	Type string
	// Text is a text part's text.
	Text string
	// Raw is the part's JSON, for a part that is not a plain text part (TextPart); it is what
	// the part encodes as.
	Raw json.RawMessage
}

// Text returns a text content.
func Text(s string) Content { return Content{text: s} }

// Parts returns a list content.
func Parts(ps ...Part) Content { return Content{parts: ps} }

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: "text", Text: s} }

// String returns the text: a text content's, or the text parts' joined.
func (c Content) String() string {
	if c.parts == nil {
		return c.text
	}
	var b strings.Builder
	for _, p := range c.parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// PartList returns the parts of a list content; nil for a text content.
func (c Content) PartList() []Part { return c.parts }

// IsParts reports whether c is a list content.
func (c Content) IsParts() bool { return c.parts != nil }

// MarshalJSON encodes c as a string, or as the list of its parts.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.parts == nil {
		return json.Marshal(c.text)
	}
	out := make([]json.RawMessage, len(c.parts))
	for i, p := range c.parts {
		b, err := p.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes a string, a list of parts (each an object, or a bare string, kept
// as it came), or null. Null and an empty list are the empty text, as LangChain reads a
// message dict's content (`content or ""`).
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*c = Content{}
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*c = Content{text: s}
		return nil
	case len(data) > 0 && data[0] == '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return fmt.Errorf("content: %w", err)
		}
		if len(raws) == 0 {
			*c = Content{}
			return nil
		}
		ps := make([]Part, len(raws))
		for i, r := range raws {
			if err := ps[i].UnmarshalJSON(r); err != nil {
				return fmt.Errorf("content part %d: %w", i, err)
			}
		}
		*c = Content{parts: ps}
		return nil
	}
	return fmt.Errorf("content must be a string or a list of parts")
}

// MarshalJSON encodes a part as its Raw, or a text part without one as {"type": "text",
// "text": …}.
func (p Part) MarshalJSON() ([]byte, error) {
	if p.Raw != nil {
		return p.Raw, nil
	}
	if p.Type == "text" {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", p.Text})
	}
	return nil, fmt.Errorf("content part of type %q has no JSON", p.Type)
}

// UnmarshalJSON decodes a part: an object (a "text" part with only its type and text is a
// TextPart; any other object is kept as its JSON, Raw, with its Type and, for a text part
// with more keys such as "cache_control", its Text), or a bare string, which LangChain keeps
// as a string: a text part whose Raw is that string.
func (p *Part) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		raw, err := canonical(data)
		if err != nil {
			return err
		}
		*p = Part{Type: "text", Text: s, Raw: raw}
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("a content part is an object or a string")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("a content part is an object or a string: %w", err)
	}
	var typ, text string
	if t, ok := obj["type"]; ok {
		if err := json.Unmarshal(t, &typ); err != nil {
			return fmt.Errorf("content part: type must be a string")
		}
	}
	_, hasText := obj["text"]
	if typ == "text" && hasText {
		if err := json.Unmarshal(obj["text"], &text); err != nil {
			return fmt.Errorf("content part: text must be a string")
		}
		if len(obj) == 2 {
			*p = TextPart(text)
			return nil
		}
	}
	raw, err := canonical(data)
	if err != nil {
		return err
	}
	*p = Part{Type: typ, Text: text, Raw: raw}
	return nil
}

// canonical returns raw as encoding/json writes a json.RawMessage (compact, with <, > and &
// escaped), so that a value decoded, encoded and decoded again is the same.
func canonical(raw []byte) (json.RawMessage, error) {
	b, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	return b, nil
}
