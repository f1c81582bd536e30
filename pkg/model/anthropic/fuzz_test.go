package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// FuzzConversation maps content of any shape a client may send: it fails or maps, never
// panics, and what it maps encodes as JSON.
func FuzzConversation(f *testing.F) {
	for _, s := range []string{
		`"hi"`, `[]`, `[{"type":"text","text":""}]`,
		`[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]`,
		`[{"type":"image_url","image_url":"https://x/y.png"}]`,
		`[{"type":"image","source_type":"base64","data":"AA","mime_type":"image/png"}]`,
		`[{"type":"image","source":{"type":"url","url":"https://x"}}]`,
		`[{"type":"thinking","thinking":"t","signature":"s"}]`,
		`[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		var c message.Content
		if json.Unmarshal([]byte(content), &c) != nil {
			return
		}
		msgs := []message.Message{
			{Type: message.TypeHuman, Content: c},
			{Type: message.TypeAI, Content: c},
			{Type: message.TypeTool, Content: c, ToolCallID: "t1"},
		}
		_, turns, err := conversation(msgs)
		if err != nil {
			return
		}
		if _, err := json.Marshal(turns); err != nil {
			t.Fatalf("mapped content does not encode: %v", err)
		}
	})
}
