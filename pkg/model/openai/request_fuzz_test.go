package openai

import (
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// FuzzUserParts feeds the decoder of a user message's parts any content JSON: it must not
// panic, and every part it maps must marshal as a part the API takes.
func FuzzUserParts(f *testing.F) {
	for _, seed := range []string{
		`[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]`,
		`[{"type":"image_url","image_url":"https://x/y.png"}]`,
		`[{"type":"image","base64":"AAAA","mime_type":"image/png"},{"type":"image","url":"https://x"}]`,
		`[{"type":"image","source_type":"url","data":"https://x"}]`,
		`[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]`,
		`[{"type":"file","file":{"file_id":"f1"}}]`,
		`[{"type":"video"}]`, `["bare"]`, `[{"type":"image_url","image_url":7}]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var c message.Content
		if json.Unmarshal([]byte(data), &c) != nil || !c.IsParts() {
			return
		}
		parts, err := userParts(c.PartList())
		if err != nil {
			return
		}
		for i, p := range parts {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("part %d of %s does not marshal: %v", i, data, err)
			}
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &head) != nil || head.Type == "" {
				t.Fatalf("part %d of %s marshals without a type: %s", i, data, b)
			}
		}
	})
}
