package funchost

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestUnquoteInto_AsJSONText checks the hot path's unescape of a body against jsontext's, on
// the escapes it decodes itself, the \u ones it leaves to jsontext, and invalid UTF-8.
func TestUnquoteInto_AsJSONText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`""`, `"plain"`, `"{\"a\":\"b\\\\c\"}"`, `"\/\b\f\n\r\t"`, `"\\"`, `"x\"` + `"`,
		`"\u00e9 and \" \ud83d\ude00"`, `"lone \ud800"`, "\"bad \xff \\\" utf8\"", `"é\n😀"`,
	} {
		v := []byte(s)
		if _, err := jsontext.AppendUnquote(nil, v); err != nil && !bytes.Contains(v, []byte{0xff}) && !bytes.Contains(v, []byte(`\ud800`)) {
			t.Fatalf("bad case %s: %v", s, err)
		}
		want, _ := jsontext.AppendUnquote(nil, v)
		var scratch bytes.Buffer
		scratch.WriteString("stale")
		if got := unquoteInto(&scratch, v); !bytes.Equal(got, want) {
			t.Errorf("unquoteInto(%s) = %q, want %q", s, got, want)
		}
	}
}
