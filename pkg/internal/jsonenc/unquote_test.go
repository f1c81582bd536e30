package jsonenc

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestUnquote_AsJSONText checks every unquoting against jsontext's, on plain text, the
// escapes decoded here, the \u ones left to jsontext, and invalid UTF-8.
func TestUnquote_AsJSONText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`""`, `"plain"`, `"{\"a\":\"b\\\\c\"}"`, `"\/\b\f\n\r\t"`, `"\\"`, `"x\"` + `"`,
		`"\u00e9 and \" \ud83d\ude00"`, `"lone \ud800"`, "\"bad \xff \\\" utf8\"", `"é\n😀"`,
		`"simple \" then \u0041"`,
	} {
		v := []byte(s)
		want, _ := jsontext.AppendUnquote(nil, v)
		if got := AppendUnquoted([]byte("pre"), v); !bytes.Equal(got, append([]byte("pre"), want...)) {
			t.Errorf("AppendUnquoted(pre, %s) = %q, want pre%q", s, got, want)
		}
		if got := Unquote([]byte("stale")[:0], v); !bytes.Equal(got, want) {
			t.Errorf("Unquote(%s) = %q, want %q", s, got, want)
		}
		if got := UnquoteString(v); got != string(want) {
			t.Errorf("UnquoteString(%s) = %q, want %q", s, got, want)
		}
		_, plain := Plain(v)
		if wantPlain := !bytes.ContainsAny(v[1:len(v)-1], "\\\xff"); plain != wantPlain {
			t.Errorf("Plain(%s) = %v, want %v", s, plain, wantPlain)
		}
	}
}
