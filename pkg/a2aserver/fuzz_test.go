package a2aserver

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzMessageInput: whatever a client sends as a message, the decoder either refuses it with
// an A2A error or yields a start input that is a JSON object and an event payload that is
// JSON; it never panics.
func FuzzMessageInput(f *testing.F) {
	for _, s := range []string{
		`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}`,
		`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"a":1}},{"text":"x"}]}`,
		`{"parts":[{"data":[[[[1]]]]}]}`, `{"parts":[{"data":null}]}`, `{"parts":[{"url":"u"}]}`,
		`{"parts":[{"text":"a","data":{}}]}`, `{"parts":[]}`,
	} {
		f.Add(s, "user_message")
	}
	f.Fuzz(func(t *testing.T, raw, field string) {
		var m Message
		if json.Unmarshal([]byte(raw), &m) != nil {
			return
		}
		data, text, hasText, err := messageInput(&m, 8)
		var rerr *Error
		if err != nil {
			if !errors.As(err, &rerr) {
				t.Fatalf("error %v is no A2A error", err)
			}
			return
		}
		if !json.Valid(eventPayload(data, text)) {
			t.Fatalf("event payload of %s is not JSON", raw)
		}
		in, err := startInput(data, text, hasText, field)
		if err != nil {
			if !errors.As(err, &rerr) {
				t.Fatalf("error %v is no A2A error", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(in, &obj) != nil {
			t.Fatalf("start input %s of %s is not a JSON object", in, raw)
		}
	})
}
