//go:build jsontextcompare

package funchost

// This file is the measured alternative of issue #12 item 12: the invocation reader of
// fastjson_invocation.go written on github.com/go-json-experiment/json/jsontext. It is test-only
// and behind the jsontextcompare tag (run with `make bench-jsontext`); the tests below prove it
// decodes what decodeHTTPInvocation decodes on the same inputs, so the benchmarks compare like
// with like.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// jxState is a pooled decoder over a pooled bytes.Buffer (jsontext reads a *bytes.Buffer in
// place, without copying).
type jxState struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var jxPool = sync.Pool{New: func() any { return new(jxState) }}

// The fast reader's rules: encoding/json's (last duplicate wins, invalid UTF-8 replaced).
// jsontext's nesting limit is fixed at 10000 levels in all, encoding/json's; the fast reader
// counts maxJSONDepth from each skipped member, so it lets through up to two levels more.
var jxOpts = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

func decodeHTTPInvocationJX(data []byte, binding string) (*HTTPTrigger, error) {
	st := jxPool.Get().(*jxState)
	st.buf = *bytes.NewBuffer(data)
	st.dec.Reset(&st.buf, jxOpts...)
	d := &st.dec
	var trig *HTTPTrigger
	err := jxObject(d, func(key []byte) error {
		if !bytes.EqualFold(key, []byte("Data")) {
			return d.SkipValue()
		}
		if d.PeekKind() == 'n' {
			trig = nil
			_, err := d.ReadToken()
			return err
		}
		return jxObject(d, func(key []byte) error {
			if !bytes.EqualFold(key, []byte(binding)) {
				return d.SkipValue()
			}
			if d.PeekKind() == 'n' {
				trig = nil
				_, err := d.ReadToken()
				return err
			}
			t, err := jxHTTPTrigger(d)
			trig = t
			return err
		})
	})
	if err == nil {
		if _, e := d.ReadToken(); e != io.EOF {
			err = errSyntax // trailing data
		}
	}
	st.buf = bytes.Buffer{}
	st.dec.Reset(&st.buf)
	jxPool.Put(st)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInvocation, err)
	}
	if trig == nil {
		return nil, nil
	}
	if trig.Method == "" {
		return nil, fmt.Errorf("%w: http trigger has no Method", ErrBadInvocation)
	}
	return trig, nil
}

// jxObject calls fn for each member with the decoder positioned at the value; fn must consume
// it. key is only valid until fn reads.
func jxObject(d *jsontext.Decoder, fn func(key []byte) error) error {
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errSyntax
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(jxUnquote(nil, name)); err != nil {
			return err
		}
	}
	_, err = d.ReadToken()
	return err
}

// jxUnquote returns the decoded bytes of the JSON string v (already validated by the decoder).
// Plain strings alias v; invalid UTF-8 becomes U+FFFD per byte, as encoding/json does.
func jxUnquote(dst []byte, v []byte) []byte {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if utf8.Valid(inner) {
			return inner
		}
		return replaceInvalidUTF8(inner)
	}
	out, _ := jsontext.AppendUnquote(dst, v) // only the invalid-UTF-8 error is possible here
	return out
}

func jxOptString(d *jsontext.Decoder) (string, error) {
	v, err := d.ReadValue()
	if err != nil {
		return "", err
	}
	switch v.Kind() {
	case 'n':
		return "", nil
	case '"':
		return string(jxUnquote(nil, v)), nil
	}
	return "", errSyntax
}

func jxHTTPTrigger(d *jsontext.Decoder) (*HTTPTrigger, error) {
	t := &HTTPTrigger{}
	var body, bodyText []byte
	bodyFresh := false
	err := jxObject(d, func(key []byte) error {
		var err error
		switch {
		case bytes.EqualFold(key, []byte("Url")):
			t.URL, err = jxOptString(d)
		case bytes.EqualFold(key, []byte("Method")):
			t.Method, err = jxOptString(d)
		case bytes.EqualFold(key, []byte("Query")):
			t.Query, err = jxQuery(d)
		case bytes.EqualFold(key, []byte("Identities")):
			var v jsontext.Value
			v, err = d.ReadValue()
			t.Identities = nil
			if err == nil && v.Kind() != 'n' {
				t.Identities = bytes.Clone(v)
			}
		case bytes.EqualFold(key, []byte("Body")):
			body, bodyText = nil, nil
			var v jsontext.Value
			if v, err = d.ReadValue(); err != nil {
				return err
			}
			if v.Kind() == '"' {
				bodyText = jxUnquote(nil, v)
				bodyFresh = !aliases(v, bodyText)
				if bodyText == nil {
					bodyText = []byte{}
				}
			} else {
				body = v // aliases the input, which outlives the decode
			}
		case bytes.EqualFold(key, []byte("Params")):
			t.Params, err = jxParams(d)
		case bytes.EqualFold(key, []byte("Headers")):
			t.Headers, err = jxHeaders(d)
		default:
			err = d.SkipValue()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	t.Method = strings.ToUpper(t.Method)
	if bodyText != nil {
		if isBinaryMediaType(headerValue(t.Headers, "Content-Type")) {
			b, err := base64.StdEncoding.AppendDecode(nil, bodyText)
			if err != nil {
				return nil, errors.New("body is not base64")
			}
			t.Body = b
		} else if bodyFresh {
			t.Body = bodyText
		} else {
			t.Body = bytes.Clone(bodyText)
		}
	} else if len(body) > 0 && string(body) != "null" {
		t.Body = bytes.Clone(body)
	}
	return t, nil
}

func jxQuery(d *jsontext.Decoder) (map[string]string, error) {
	switch d.PeekKind() {
	case 'n':
		_, err := d.ReadToken()
		return nil, err
	case '"':
		v, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		return decodeQuery(bytes.Clone(v))
	}
	q := map[string]string{}
	err := jxObject(d, func(key []byte) error {
		k := string(key)
		vals, err := jxStringValues(d)
		q[k] = strings.Join(vals, ",")
		return err
	})
	return q, err
}

func jxParams(d *jsontext.Decoder) (map[string]*string, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, err
	}
	m := map[string]*string{}
	err := jxObject(d, func(key []byte) error {
		k := string(key)
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		m[k] = optionalString([]byte(v))
		return nil
	})
	return m, err
}

func jxStringValues(d *jsontext.Decoder) ([]string, error) {
	switch d.PeekKind() {
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		var vals []string
		for d.PeekKind() != ']' {
			v, err := d.ReadValue()
			if err != nil {
				return nil, err
			}
			if v.Kind() != '"' {
				return nil, errSyntax
			}
			vals = append(vals, string(jxUnquote(nil, v)))
		}
		_, err := d.ReadToken()
		return vals, err
	case 'n':
		_, err := d.ReadToken()
		return nil, err
	}
	v, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	if v.Kind() == '"' {
		return []string{string(jxUnquote(nil, v))}, nil
	}
	return []string{string(v)}, nil
}

func jxHeaders(d *jsontext.Decoder) (map[string][]string, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, err
	}
	m := map[string][]string{}
	err := jxObject(d, func(key []byte) error {
		k := string(key)
		vals, err := jxStringValues(d)
		m[k] = vals
		return err
	})
	return m, err
}

// jxInputs are the inputs both readers are compared on: the golden invocations, the fuzz
// seeds and the edge cases of strictness (duplicates, bad UTF-8, trailing data, depth).
func jxInputs(t testing.TB) [][]byte {
	var in [][]byte
	entries, err := os.ReadDir(filepath.Join("testdata", "invocations"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "invocations", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, data)
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, s := range []string{
		`{"data":{"REQ":{"method":"get","headers":{"a":"b","c":null,"d":[]},"body":{"x":[1,2.5e3,-0]}}}}`,
		`{"Data":{"req":{"Method":"POST","Body":"\ud83d\ude00 \u00e9\n\"","Query":"{\"a\":[\"x\",\"y\"]}"}},"Metadata":null}`,
		`{"Data":{"req":{"Method":"GET"},"req":null}}`,
		`{"Data":{"req":{"Method":"GET","Method":"PUT","method":"post"}}}`,
		`{"Data":{"req":{"Method":"GET"}},"Data":null}`,
		"{\"Data\":{\"req\":{\"Method\":\"G\xffT\",\"Body\":\"a\xfe\",\"Headers\":{\"k\xff\":[\"v\xc0\"]}}}}",
		`{"Data":{"req":{"Method":"GET","Body":"\ud800\u0041\udc00x\ud83d"}}}`,
		`{"Data":{"req":{"Method":"GET","Params":{"a":"1","b":null,"c":2,"d":{"x":1}},"Query":{"q":["1","2"],"n":3}}}}`,
		`{"Data":{"req":{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"aGk="}}}`,
		`{"Data":{"req":{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"!!"}}}`,
		`{"Data":{"req":{"Method":"GET","Identities":[{"a":1}],"Body":null}}}`,
		`{"Data":{"req":{"Method":"GET"}}} {}`,
		`{"Data":{"req":{"Method":"GET"}}} x`,
		`{"Data":{"req":{"Method":"GET"}},}`,
		`{"Data":{"req":{"Method":"GET"}}`,
		`{"Data":{"req":{"Method":"GET","Body":NaN}}}`,
		`{"Data":{"req":{"Method":"GET","Body":01}}}`,
		"{\"Data\":{\"req\":{\"Method\":\"GET\",\"Body\":\"a\tb\"}}}",
		`{"Data":{"req":{"Method":"GET","Headers":{"a":[1]}}}}`,
		`{"Data":{"req":{"Url":5,"Method":"GET"}}}`,
		`{"Data":{"req":{}}}`,
		`{"Data":"x"}`,
		`[]`,
		``,
		`{"Data":{"req":{"Method":"GET","Body":` + deep(9990) + `}}}`,
		`{"x":` + deep(10005) + `,"Data":{"req":{"Method":"GET"}}}`,
	} {
		in = append(in, []byte(s))
	}
	return in
}

// TestJXInvocation_MatchesFastReader runs both readers on every input: same trigger, same
// acceptance, same error class.
func TestJXInvocation_MatchesFastReader(t *testing.T) {
	for i, data := range jxInputs(t) {
		fast, fastErr := decodeHTTPInvocation(data, "req")
		jx, jxErr := decodeHTTPInvocationJX(data, "req")
		if (fastErr == nil) != (jxErr == nil) {
			t.Errorf("input %d %.80q: fast err %v, jsontext err %v", i, data, fastErr, jxErr)
			continue
		}
		if fastErr != nil {
			if errors.Is(fastErr, ErrBadInvocation) != errors.Is(jxErr, ErrBadInvocation) {
				t.Errorf("input %d: error class differs: %v / %v", i, fastErr, jxErr)
			}
			continue
		}
		if !reflect.DeepEqual(fast, jx) {
			t.Errorf("input %d %.80q differs:\nfast     %#v\njsontext %#v", i, data, fast, jx)
		}
	}
}

// FuzzJXInvocation_MatchesFastReader extends the comparison to generated inputs.
func FuzzJXInvocation_MatchesFastReader(f *testing.F) {
	for _, data := range jxInputs(f) {
		if len(data) < 4096 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, fastErr := decodeHTTPInvocation(data, "req")
		jx, jxErr := decodeHTTPInvocationJX(data, "req")
		if (fastErr == nil) != (jxErr == nil) {
			t.Fatalf("%q: fast err %v, jsontext err %v", data, fastErr, jxErr)
		}
		if fastErr == nil && !reflect.DeepEqual(fast, jx) {
			t.Fatalf("%q differs:\nfast     %#v\njsontext %#v", data, fast, jx)
		}
	})
}

// The decode alone, both readers, on BenchmarkPayloadPath's invocation and a golden one.
func benchmarkDecode(b *testing.B, decode func([]byte, string) (*HTTPTrigger, error), payload []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if t, err := decode(payload, "req"); err != nil || t == nil {
			b.Fatal(err)
		}
	}
}

func payloadPathInvocation() []byte {
	return []byte(`{"Data":{"req":{"Url":"http://localhost:7071/api/echo","Method":"POST","Query":{},` +
		`"Headers":{"Content-Type":["application/json"],"Accept":["*/*"],"X-Functions-Key":["k"]},"Params":{},` +
		`"Body":` + quoteJSON(benchBody) + `}},"Metadata":{"sys":{"MethodName":"echo","UtcNow":"2026-11-22T03:00:00Z","RandGuid":"x"}}}`)
}

func BenchmarkDecodeInvocation(b *testing.B) {
	golden, err := os.ReadFile(filepath.Join("testdata", "invocations", "http_post_json.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name    string
		payload []byte
	}{{"PayloadPath", payloadPathInvocation()}, {"GoldenPostJSON", golden}} {
		b.Run(p.name+"/handwritten", func(b *testing.B) { benchmarkDecode(b, decodeHTTPInvocation, p.payload) })
		b.Run(p.name+"/jsontext", func(b *testing.B) { benchmarkDecode(b, decodeHTTPInvocationJX, p.payload) })
	}
}

// BenchmarkPayloadPathJX is BenchmarkPayloadPath, the whole custom-handler path, with each
// reader.
func BenchmarkPayloadPathJX(b *testing.B) {
	b.Run("handwritten", BenchmarkPayloadPath)
	b.Run("jsontext", func(b *testing.B) {
		decodeInvocation = decodeHTTPInvocationJX
		defer func() { decodeInvocation = decodeHTTPInvocation }()
		BenchmarkPayloadPath(b)
	})
}
