package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// contentBlocks maps a message's content to content blocks: a text to a text block, and a
// list's parts each to a block: text parts, images as OpenAI and LangChain write them
// (image_url with a data: or https URL; image with base64 or url and mime_type), and any
// other part taken as the Anthropic block its JSON is (an image with a source, a document,
// a thinking block an earlier reply carried). Empty texts are left out, as Anthropic
// rejects empty text blocks.
func contentBlocks(c message.Content) ([]sdk.ContentBlockParamUnion, error) {
	if !c.IsParts() {
		if t := c.String(); t != "" {
			return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(t)}, nil
		}
		return nil, nil
	}
	var out []sdk.ContentBlockParamUnion
	for i, p := range c.PartList() {
		b, ok, err := partBlock(p)
		if err != nil {
			return nil, fmt.Errorf("content part %d: %w", i, err)
		}
		if ok {
			out = append(out, b)
		}
	}
	return out, nil
}

// partBlock maps one part; ok is false for a part left out (an empty text).
func partBlock(p message.Part) (sdk.ContentBlockParamUnion, bool, error) {
	if p.Type == "text" && p.Raw == nil {
		return sdk.NewTextBlock(p.Text), p.Text != "", nil
	}
	var img struct {
		ImageURL   json.RawMessage `json:"image_url"`
		Source     json.RawMessage `json:"source"`
		SourceType string          `json:"source_type"`
		URL        string          `json:"url"`
		Data       string          `json:"data"`
		Base64     string          `json:"base64"`
		MimeType   string          `json:"mime_type"`
	}
	if err := json.Unmarshal(p.Raw, &img); err != nil {
		return sdk.ContentBlockParamUnion{}, false, fmt.Errorf("%s part: %w", p.Type, err)
	}
	switch {
	case p.Type == "image_url":
		var u struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(img.ImageURL, &u.URL) != nil {
			if err := json.Unmarshal(img.ImageURL, &u); err != nil {
				return sdk.ContentBlockParamUnion{}, false, fmt.Errorf("image_url part: %w", err)
			}
		}
		b, err := imageURL(u.URL)
		return b, err == nil, err
	case p.Type == "image" && img.Source == nil:
		switch {
		case img.Base64 != "" || (img.SourceType == "base64" && img.Data != ""):
			data := img.Base64
			if data == "" {
				data = img.Data
			}
			return sdk.NewImageBlockBase64(img.MimeType, data), true, nil
		case img.URL != "":
			b, err := imageURL(img.URL)
			return b, err == nil, err
		}
		return sdk.ContentBlockParamUnion{}, false, fmt.Errorf("image part: neither base64 data nor a url")
	}
	var b sdk.ContentBlockParamUnion
	if err := json.Unmarshal(p.Raw, &b); err != nil {
		return b, false, fmt.Errorf("a %q part is not an Anthropic content block: %w", p.Type, err)
	}
	return b, true, nil
}

// imageURL maps an image URL: a data: URL to a base64 source, another to a url source.
func imageURL(u string) (sdk.ContentBlockParamUnion, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		if u == "" {
			return sdk.ContentBlockParamUnion{}, fmt.Errorf("image url is empty")
		}
		return sdk.NewImageBlock(sdk.URLImageSourceParam{URL: u}), nil
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return sdk.ContentBlockParamUnion{}, fmt.Errorf("image data url is not base64")
	}
	return sdk.NewImageBlockBase64(mime, data), nil
}
