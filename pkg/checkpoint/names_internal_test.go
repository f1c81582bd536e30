package checkpoint

import (
	"encoding/json"
	"testing"
)

func TestNameLength_IsTheEscapedLength(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", ".", "..", "...", "a.b", "thread-1_~", "a b/c%", "é", "\x00\xff", "%2E"} {
		if got, want := escapedLength(s), len(Escape(s)); got != want {
			t.Errorf("escapedLength(%q) = %d, want len(Escape) %d", s, got, want)
		}
	}
}

func TestIsJSONObject_AgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, ` {"a":1,"a":2} `, `null`, `[]`, `"x"`, `{`, `{"a":1}x`, "{\"\xff\":1}", ``, ` `, `{"a":}`} {
		var obj map[string]json.RawMessage
		want := json.Unmarshal([]byte(s), &obj) == nil && obj != nil
		if got := isJSONObject([]byte(s)); got != want {
			t.Errorf("isJSONObject(%q) = %v, encoding/json: %v", s, got, want)
		}
	}
}
