package jsonlimit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		raw       string
		depth     int
		nodes     int
		wantError error
	}{
		{"scalar", `"x"`, 1, 1, nil},
		{"empty object at the cap", `{}`, 1, 1, nil},
		{"a member below a depth-1 cap", `{"a":1}`, 1, 10, jsonlimit.ErrTooDeep},
		{"32 levels", nested(32), 32, 0, nil},
		{"33 levels", nested(33), 32, 0, jsonlimit.ErrTooDeep},
		{"5000 levels", nested(5000), 32, 0, jsonlimit.ErrTooDeep},
		{"arrays count", `[[[[1]]]]`, 4, 0, jsonlimit.ErrTooDeep},
		{"arrays within", `[[[1]]]`, 4, 0, nil},
		{"nodes at the cap", `{"a":[1,2],"b":3}`, 8, 4, nil},
		{"nodes past the cap", `{"a":[1,2],"b":3}`, 8, 3, jsonlimit.ErrTooManyNodes},
		{"no node cap", `[` + strings.Repeat("1,", 5000) + `1]`, 8, 0, nil},
		{"first violation in document order", `{"a":1,"b":{"c":{}}}`, 2, 1, jsonlimit.ErrTooManyNodes},
		{"invalid", `{"a":}`, 8, 0, jsonlimit.ErrInvalid},
	}
	for _, tt := range tests {
		if err := jsonlimit.Check([]byte(tt.raw), tt.depth, tt.nodes); !errors.Is(err, tt.wantError) || (err == nil) != (tt.wantError == nil) {
			t.Errorf("%s: Check = %v, want %v", tt.name, err, tt.wantError)
		}
	}
}

// FuzzCheck compares Check with a recursive walk of the value, one rule at a time (the other
// off).
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{}`, `[1,[2,[3]]]`, `{"a":{"b":[{}]}}`, `"s"`, `[[],{}]`, `{"a":1,"a":2}`, nested(40)} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, limit int) {
		if limit < 1 || limit > 64 || !json.Valid([]byte(raw)) {
			return // Check sees JSON that its callers validated
		}
		dec := json.NewDecoder(strings.NewReader(raw))
		depth, nodes := shape(dec, 1)
		if k := strings.TrimLeft(raw, " \t\r\n")[0]; k != '{' && k != '[' {
			depth = 0 // a scalar passes
		}
		if err := jsonlimit.Check([]byte(raw), limit, 0); (err != nil) != (depth > limit) {
			t.Fatalf("depth %d, cap %d: Check = %v", depth, limit, err)
		}
		if err := jsonlimit.Check([]byte(raw), 1<<20, limit); (err != nil) != (nodes > limit) {
			t.Fatalf("%d nodes, cap %d: Check = %v", nodes, limit, err)
		}
	})
}

// shape reads one value at depth d from dec and returns the depth of its deepest value and
// how many member values and array items it holds (repeated keys each count).
func shape(dec *json.Decoder, d int) (depth, nodes int) {
	tok, _ := dec.Token()
	if delim, ok := tok.(json.Delim); !ok || (delim != '{' && delim != '[') {
		return d, 0
	}
	object := tok == json.Delim('{')
	depth = d
	for dec.More() {
		if object {
			_, _ = dec.Token() // the key
		}
		kd, kn := shape(dec, d+1)
		depth, nodes = max(depth, kd), nodes+kn+1
	}
	_, _ = dec.Token() // the closing delimiter
	return depth, nodes
}
