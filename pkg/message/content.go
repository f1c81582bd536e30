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

// Part is one part of a list content. Type "text" carries Text; every other part is kept as
// the JSON it came as (Raw), so content a model or a client sent goes back unchanged.
type Part struct {
	// Type is the part's type: "text", "image_url", a vendor's block type.
	Type string
	// Text is a text part's text.
	Text string
	// Raw is the part's JSON, for a part that is not text; nil for a text part.
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

// UnmarshalJSON decodes a string, a list of parts (a bare string in the list is a text
// part), or null (empty text).
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
			return err
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

// MarshalJSON encodes a text part as {"type": "text", "text": …}, any other as its Raw.
func (p Part) MarshalJSON() ([]byte, error) {
	if p.Type == "text" && p.Raw == nil {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", p.Text})
	}
	if p.Raw == nil {
		return nil, fmt.Errorf("content part of type %q has no JSON", p.Type)
	}
	return p.Raw, nil
}

// UnmarshalJSON decodes a part: an object with a "type", or a bare string (a text part).
func (p *Part) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*p = TextPart(s)
		return nil
	}
	var head struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("a content part is an object with a type: %w", err)
	}
	if head.Type == "" {
		return fmt.Errorf("content part: type required")
	}
	if head.Type == "text" && head.Text != nil {
		*p = TextPart(*head.Text)
		return nil
	}
	*p = Part{Type: head.Type, Raw: append(json.RawMessage(nil), data...)}
	return nil
}
