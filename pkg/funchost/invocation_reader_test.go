package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readerCase is an input of the invocation reader's same-result tests. wantErr is the whole
// error message the reader answers with, "" when it decodes; either way its result agrees
// with encoding/json's (checkAgainstEncodingJSON).
type readerCase struct {
	name    string
	data    []byte
	wantErr string
}

// readerCases are the golden invocations, the fuzz seeds and the edge cases of strictness
// (duplicates, bad UTF-8, surrogates, trailing data, depth). The error messages are the ones
// the hand-written reader that preceded the jsontext one answered with; its results were the
// same on every case but "10001 levels".
func readerCases(t testing.TB) []readerCase {
	var cases []readerCase
	entries, err := os.ReadDir(filepath.Join("testdata", "invocations"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "invocations", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, readerCase{name: e.Name(), data: data})
	}
	const bad = "funchost: malformed invocation payload: "
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct{ name, data, wantErr string }{
		{"lower-case keys", `{"data":{"REQ":{"method":"get","headers":{"a":"b","c":null,"d":[]},"body":{"x":[1,2.5e3,-0]}}}}`, ""},
		{"escapes and string query", `{"Data":{"req":{"Method":"POST","Body":"\ud83d\ude00 \u00e9\n\"","Query":"{\"a\":[\"x\",\"y\"]}"}},"Metadata":null}`, ""},
		{"later null binding", `{"Data":{"req":{"Method":"GET"},"req":null}}`, ""},
		{"duplicate fields, last wins", `{"Data":{"req":{"Method":"GET","Method":"PUT","method":"post"}}}`, ""},
		{"later null Data", `{"Data":{"req":{"Method":"GET"}},"Data":null}`, ""},
		{"invalid UTF-8", "{\"Data\":{\"req\":{\"Method\":\"G\xffT\",\"Body\":\"a\xfe\",\"Headers\":{\"k\xff\":[\"v\xc0\"]}}}}", ""},
		{"lone surrogates", `{"Data":{"req":{"Method":"GET","Body":"\ud800\u0041\udc00x\ud83d"}}}`, ""},
		{"params and query of any kind", `{"Data":{"req":{"Method":"GET","Params":{"a":"1","b":null,"c":2,"d":{"x":1}},"Query":{"q":["1","2"],"n":3}}}}`, ""},
		{"base64 body", `{"Data":{"req":{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"aGk="}}}`, ""},
		{"body not base64", `{"Data":{"req":{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"!!"}}}`, bad + "body is not base64"},
		{"identities, null body", `{"Data":{"req":{"Method":"GET","Identities":[{"a":1}],"Body":null}}}`, ""},
		{"second document", `{"Data":{"req":{"Method":"GET"}}} {}`, bad + "invalid JSON"},
		{"trailing bytes", `{"Data":{"req":{"Method":"GET"}}} x`, bad + "invalid JSON"},
		{"trailing comma", `{"Data":{"req":{"Method":"GET"}},}`, bad + "invalid JSON"},
		{"truncated", `{"Data":{"req":{"Method":"GET"}}`, bad + "invalid JSON"},
		{"NaN", `{"Data":{"req":{"Method":"GET","Body":NaN}}}`, bad + "invalid JSON"},
		{"leading zero", `{"Data":{"req":{"Method":"GET","Body":01}}}`, bad + "invalid JSON"},
		{"control character in string", "{\"Data\":{\"req\":{\"Method\":\"GET\",\"Body\":\"a\tb\"}}}", bad + "invalid JSON"},
		{"header value not a string", `{"Data":{"req":{"Method":"GET","Headers":{"a":[1]}}}}`, bad + "invalid JSON"},
		{"Url not a string", `{"Data":{"req":{"Url":5,"Method":"GET"}}}`, bad + "invalid JSON"},
		{"no Method", `{"Data":{"req":{}}}`, bad + "http trigger has no Method"},
		{"Data a string", `{"Data":"x"}`, bad + "invalid JSON"},
		{"array", `[]`, bad + "invalid JSON"},
		{"empty", ``, bad + "invalid JSON"},
		{"query string not an object", `{"Data":{"req":{"Method":"GET","Query":"[1]"}}}`, bad + bad + "Query must be an object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
		{"9993 levels", `{"Data":{"req":{"Method":"GET","Body":` + deep(9990) + `}}}`, ""},
		{"10000 levels", `{"x":` + deep(9999) + `,"Data":{"req":{"Method":"GET"}}}`, ""},
		// encoding/json's limit; the hand-written reader let one or two levels more through.
		{"10001 levels", `{"x":` + deep(10000) + `,"Data":{"req":{"Method":"GET"}}}`, bad + "invalid JSON"},
		{"10006 levels", `{"x":` + deep(10005) + `,"Data":{"req":{"Method":"GET"}}}`, bad + "invalid JSON"},
	} {
		cases = append(cases, readerCase{name: c.name, data: []byte(c.data), wantErr: c.wantErr})
	}
	return cases
}

// TestDecodeHTTPInvocation_MatchesEncodingJSON runs the reader on every case: the error
// message it answers with, and the same trigger and acceptance as encoding/json.
func TestDecodeHTTPInvocation_MatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range readerCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeHTTPInvocation(c.data, "req")
			if (err != nil || c.wantErr != "") && (err == nil || err.Error() != c.wantErr) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			checkAgainstEncodingJSON(t, c.data, got, err)
		})
	}
}

// FuzzDecodeHTTPInvocation checks the invocation reader against encoding/json: it never
// accepts what encoding/json refuses as JSON, and whatever encoding/json accepts as an
// httpTrigger, the reader decodes to the same trigger.
func FuzzDecodeHTTPInvocation(f *testing.F) {
	for _, c := range readerCases(f) {
		if len(c.data) < 4096 {
			f.Add(c.data)
		}
	}
	// Names repeated, or equal but for case: joined or replaced as request does.
	f.Add([]byte(`{"Data":{"req":{"Method":"GET","Headers":{"X-A":["1"],"x-a":"2","X-A":["3","4"],"Y":"5","y":null,"Y":null,"Z":[]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeHTTPInvocation(data, "req")
		checkAgainstEncodingJSON(t, data, got, err)
		// The hot path's variant, its body left in the payload or a scratch buffer and its
		// headers read as the rebuilt request's, decodes the same trigger.
		var scratch hotScratch
		scratch.body.WriteString("stale bytes of an earlier request")
		hot, hotErr := decodeHTTPInvocationBody(bytes.Clone(data), "req", &scratch)
		same := (got == nil) == (hot == nil)
		if same && got != nil {
			h, c := *hot, *got
			h.header, c.Headers = nil, nil
			same = reflect.DeepEqual(h, c) && sameRequestHeader(hot.header, got.Headers)
		}
		if (err == nil) != (hotErr == nil) || (err != nil && err.Error() != hotErr.Error()) || !same {
			t.Fatalf("hot path differs for %q:\nhot  %#v, %v\ncold %#v, %v", data, hot, hotErr, got, err)
		}
	})
}

// sameRequestHeader reports whether the hot path's header is what request makes of the
// trigger's Headers: canonical names, no empty ones, the values of names equal but for case
// joined (in the order sent on the hot path, in map order otherwise: compared sorted).
func sameRequestHeader(hot http.Header, sent map[string][]string) bool {
	want := http.Header{}
	joined := false
	for k, vs := range sent {
		if len(vs) == 0 {
			continue
		}
		ck := textproto.CanonicalMIMEHeaderKey(k)
		joined = joined || want[ck] != nil
		want[ck] = append(want[ck], vs...)
	}
	if len(hot) == 0 && len(want) == 0 {
		return true
	}
	if joined {
		for _, h := range []http.Header{hot, want} {
			for _, vs := range h {
				slices.Sort(vs)
			}
		}
	}
	return reflect.DeepEqual(hot, want)
}

// checkAgainstEncodingJSON fails t unless the reader's result (got, gotErr) for data agrees
// with encoding/json's: the invocation unmarshalled into an InvocationRequest, its "req"
// binding found case-insensitively and decoded by DecodeHTTPTrigger.
func checkAgainstEncodingJSON(t testing.TB, data []byte, got *httpTrigger, gotErr error) {
	t.Helper()
	if gotErr != nil && !errors.Is(gotErr, errBadInvocation) {
		t.Fatalf("error class: %v", gotErr)
	}
	if !json.Valid(data) {
		if gotErr == nil {
			t.Fatalf("reader accepted invalid JSON %q", data)
		}
		return
	}
	var inv invocationRequest
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
		if gotErr == nil && got != nil {
			t.Fatalf("reader found a trigger encoding/json did not: %q", data)
		}
		return
	}
	want, wantErr := decodeHTTPTrigger(raw)
	if wantErr != nil {
		if gotErr == nil && got != nil {
			// encoding/json is the reference for refusals of well-formed JSON.
			t.Logf("encoding/json refused (%v), the reader accepted: %q", wantErr, data)
		}
		return
	}
	if gotErr != nil {
		t.Fatalf("reader refused what encoding/json accepts (%v): %q", gotErr, data)
	}
	if got == nil {
		t.Fatalf("reader lost the trigger: %q", data)
	}
	if !reflect.DeepEqual(normalTrigger(got), normalTrigger(want)) {
		t.Fatalf("reader and encoding/json differ for %q:\nreader        %#v\nencoding/json %#v", data, got, want)
	}
}

// BenchmarkDecodeInvocation measures the invocation reader alone, on BenchmarkPayloadPath's
// invocation and on a golden one.
func BenchmarkDecodeInvocation(b *testing.B) {
	golden, err := os.ReadFile(filepath.Join("testdata", "invocations", "http_post_json.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name    string
		payload []byte
	}{{"PayloadPath", payloadPathInvocation()}, {"GoldenPostJSON", golden}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p.payload)))
			for b.Loop() {
				if t, err := decodeHTTPInvocation(p.payload, "req"); err != nil || t == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// normalTrigger clears differences that carry no meaning (nil vs empty maps and slices).
func normalTrigger(t *httpTrigger) httpTrigger {
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
