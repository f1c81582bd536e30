package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeHTTPInvocation checks the hand-written invocation reader against encoding/json:
// whatever encoding/json accepts as an httpTrigger, the fast reader decodes to the same
// trigger, and the fast reader never accepts invalid JSON.
func FuzzDecodeHTTPInvocation(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "invocations"))
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join("testdata", "invocations", e.Name())); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"data":{"REQ":{"method":"get","headers":{"a":"b","c":null,"d":[]},"body":{"x":[1,2.5e3,-0]}}}}`))
	f.Add([]byte(`{"Data":{"req":{"Method":"POST","Body":"\ud83d\ude00 \u00e9\n\"","Query":"{\"a\":[\"x\",\"y\"]}"}},"Metadata":null}`))
	f.Add([]byte(`{"Data":{"req":{"Method":"GET"},"req":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, fastErr := decodeHTTPInvocation(data, "req")
		var inv struct {
			Data map[string]json.RawMessage
		}
		if !json.Valid(data) {
			if fastErr == nil {
				t.Fatalf("fast reader accepted invalid JSON %q", data)
			}
			return
		}
		if json.Unmarshal(data, &inv) != nil {
			return // valid JSON of another shape (e.g. Data is a string): both may refuse
		}
		if repeatsKey(data, "Data", "req") {
			// encoding/json merges repeated objects into one map, the reader keeps the last
			// binding: both are defensible and the host never repeats keys.
			return
		}
		raw, ok := lookupFold(inv.Data, "req")
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			if fastErr == nil && fast != nil {
				t.Fatalf("fast reader found a trigger encoding/json did not: %q", data)
			}
			return
		}
		slow, slowErr := DecodeHTTPTrigger(raw)
		if slowErr != nil {
			if fastErr == nil && fast != nil {
				// The slow path is the reference for refusals of well-formed JSON.
				t.Logf("slow refused (%v), fast accepted: %q", slowErr, data)
			}
			return
		}
		if fastErr != nil {
			if !errors.Is(fastErr, ErrBadInvocation) {
				t.Fatalf("fast error class: %v", fastErr)
			}
			t.Fatalf("fast reader refused what encoding/json accepts (%v): %q", fastErr, data)
		}
		if fast == nil {
			t.Fatalf("fast reader lost the trigger: %q", data)
		}
		if !reflect.DeepEqual(normalTrigger(fast), normalTrigger(slow)) {
			t.Fatalf("fast and slow differ for %q:\nfast %#v\nslow %#v", data, fast, slow)
		}
	})
}

// normalTrigger clears differences that carry no meaning (nil vs empty maps and slices).
func normalTrigger(t *HTTPTrigger) HTTPTrigger {
	n := *t
	if len(n.Query) == 0 {
		n.Query = nil
	}
	if len(n.Params) == 0 {
		n.Params = nil
	}
	if len(n.Headers) == 0 {
		n.Headers = nil
	}
	for k, v := range n.Headers {
		if len(v) == 0 {
			n.Headers[k] = nil
		}
	}
	if len(n.Body) == 0 {
		n.Body = nil
	}
	if n.Identities != nil {
		var buf bytes.Buffer
		_ = json.Compact(&buf, n.Identities)
		n.Identities = buf.Bytes()
	}
	return n
}

func TestAppendJSONString_RoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "ctl\x00\x1f\n\r\t", "é😀", "bad\xffutf8", "\u2028\u2029", "<&>"} {
		enc := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, enc, err)
		}
		want := string(bytes.ToValidUTF8([]byte(s), []byte("\ufffd")))
		if back != want {
			t.Fatalf("round trip of %q = %q, want %q", s, back, want)
		}
	}
}

func TestAppendHTTPEnvelope_MatchesEncodingJSON(t *testing.T) {
	res := HTTPOutput{StatusCode: 404, Headers: map[string]string{"B": "2, 3", "A": "x\"y"}, Body: `{"error":"é"}`}
	fast := appendHTTPEnvelope(nil, 404, http.Header{"B": {"2", "3"}, "A": {"x\"y"}, "Empty": {}}, []byte(res.Body))
	var a, b any
	if err := json.Unmarshal(fast, &a); err != nil {
		t.Fatal(err)
	}
	slow, _ := json.Marshal(InvocationResponse{Outputs: map[string]any{"res": res}, Logs: []string{}})
	_ = json.Unmarshal(slow, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("fast %s\nslow %s", fast, slow)
	}
}

// repeatsKey reports whether the top-level object repeats key (case-insensitively) or an
// object under it repeats sub.
func repeatsKey(data []byte, key, sub string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	count := func(raw []byte, want string) (int, []json.RawMessage) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		n := 0
		var vals []json.RawMessage
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return 0, nil
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return n, vals
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return n, vals
			}
			if k, ok := tok.(string); ok && strings.EqualFold(k, want) {
				n++
				vals = append(vals, v)
			}
		}
		return n, vals
	}
	n, vals := count(data, key)
	if n > 1 {
		return true
	}
	for _, v := range vals {
		if m, _ := count(v, sub); m > 1 {
			return true
		}
	}
	return false
}
