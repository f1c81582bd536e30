//go:build jsontextcompare

package host

// This file is the measured alternative of issue #12 item 12: parseStrict of jsontree.go
// written on github.com/go-json-experiment/json/jsontext, building the same jsonTree. It is
// test-only and behind the jsontextcompare tag (run with `make bench-jsontext`); the tests
// below prove it builds node-for-node the tree parseStrict builds, so the benchmarks compare
// like with like.

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

type jxState struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var jxPool = sync.Pool{New: func() any { return new(jxState) }}

// Duplicate names allowed: the tree keeps Python's dict semantics for them. Invalid UTF-8 must
// be "allowed" too, because strict jsontext also refuses escaped lone surrogates ("\ud800"),
// which encoding/json (and so parseStrict) accepts; raw bytes are checked with utf8.Valid
// first instead, as parseStrict does. The nesting limit is jsontext's fixed 10000, the same as
// json.Valid's.
var jxOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

func parseStrictJX(src []byte, maxParseDepth int) (*jsonTree, error) {
	if !utf8.Valid(src) {
		return nil, errInvalidJSON
	}
	st := jxPool.Get().(*jxState)
	st.buf = *bytes.NewBuffer(src)
	st.dec.Reset(&st.buf, jxOpts...)
	t := &jsonTree{src: src, nodes: make([]jsonNode, 0, 16)}
	b := jxBuilder{d: &st.dec, p: parser{t: t, maxDepth: maxParseDepth}}
	root, err := b.value(1)
	if err == nil {
		if _, e := b.d.ReadToken(); e != io.EOF {
			err = errInvalidJSON // a second document or trailing bytes
		}
	}
	st.buf = bytes.Buffer{}
	st.dec.Reset(&st.buf)
	jxPool.Put(st)
	if err != nil {
		return nil, errInvalidJSON
	}
	t.root = root
	return t, nil
}

type jxBuilder struct {
	d *jsontext.Decoder
	p parser
}

func (b *jxBuilder) value(depth int) (int32, error) {
	d := b.d
	switch k := d.PeekKind(); k {
	case '{', '[':
		if depth > b.p.maxDepth {
			v, err := d.ReadValue()
			if err != nil {
				return -1, err
			}
			end := int32(d.InputOffset())
			kind := kindArray
			if k == '{' {
				kind = kindObject
			}
			return b.p.add(jsonNode{kind: kind, deep: true, start: end - int32(len(v)), end: end, child: -1, next: -1, val: -1}), nil
		}
		if _, err := d.ReadToken(); err != nil {
			return -1, err
		}
		start := int32(d.InputOffset()) - 1
		var idx int32
		var err error
		if k == '{' {
			idx = b.p.add(jsonNode{kind: kindObject, start: start, child: -1, next: -1, val: -1})
			err = b.object(idx, depth)
		} else {
			idx = b.p.add(jsonNode{kind: kindArray, start: start, child: -1, next: -1, val: -1})
			err = b.array(idx, depth)
		}
		if err != nil {
			return -1, err
		}
		if _, err := d.ReadToken(); err != nil {
			return -1, err
		}
		b.p.t.nodes[idx].end = int32(d.InputOffset())
		return idx, nil
	case 0:
		_, err := d.ReadToken()
		if err == nil || err == io.EOF {
			err = errInvalidJSON
		}
		return -1, err
	}
	v, err := d.ReadValue()
	if err != nil {
		return -1, err
	}
	end := int32(d.InputOffset())
	kind := kindNumber
	switch v.Kind() {
	case 'n':
		kind = kindNull
	case 't', 'f':
		kind = kindBool
	case '"':
		kind = kindString
	}
	return b.p.add(jsonNode{kind: kind, start: end - int32(len(v)), end: end, child: -1, next: -1, val: -1}), nil
}

func (b *jxBuilder) array(idx int32, depth int) error {
	last := int32(-1)
	for b.d.PeekKind() != ']' {
		v, err := b.value(depth + 1)
		if err != nil {
			return err
		}
		if last < 0 {
			b.p.t.nodes[idx].child = v
		} else {
			b.p.t.nodes[last].next = v
		}
		last = v
	}
	return nil
}

func (b *jxBuilder) object(idx int32, depth int) error {
	p, d := &b.p, b.d
	last := int32(-1)
	var members []int32
	var byKey map[string]int32
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return err
		}
		keyEnd := int32(d.InputOffset()) - 1
		keyStart := keyEnd - int32(len(name)) + 2
		escaped := bytes.IndexByte(name, '\\') >= 0
		v, err := b.value(depth + 1)
		if err != nil {
			return err
		}
		m := jsonNode{kind: kindMember, escapedKey: escaped, start: keyStart, end: keyEnd, child: -1, next: -1, val: v}
		if prev := p.findMember(members, byKey, m); prev >= 0 {
			p.t.nodes[prev].val = v
			continue
		}
		mi := p.add(m)
		if last < 0 {
			p.t.nodes[idx].child = mi
		} else {
			p.t.nodes[last].next = mi
		}
		last = mi
		members = append(members, mi)
		if len(members) > dedupMapThreshold {
			if byKey == nil {
				byKey = make(map[string]int32, 2*dedupMapThreshold)
				for _, x := range members {
					byKey[p.t.key(x)] = x
				}
			} else {
				byKey[p.t.key(mi)] = mi
			}
		}
	}
	return nil
}

// jxBodies are the bodies both parsers are compared on: the validate and fuzz tests' inputs and
// the strictness edge cases.
func jxBodies() []string {
	nest := func(n int, inner string) string {
		return strings.Repeat(`{"a":`, n) + inner + strings.Repeat(`}`, n)
	}
	items := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	var dup strings.Builder
	dup.WriteString(`{`)
	for i := range 40 {
		dup.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	dup.WriteString(`"input":{"x":1},"input":{"y":2},"kaa":3,"k\u0061b":[]}`)
	return []string{
		nest(31, "{}"), nest(32, "1"), `{"a":` + items(10001) + `,"a":1}`, `{"a":` + nest(40, "1") + `,"\u0061":1}`,
		dup.String(), string(benchRunBody),
		`{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"t1"}}}`,
		`{"input":{},"config":null,"version":"1"}`,
		`{"input":{"a":{"a":{"a":[1,2,{"b":null}]}}},"stream_mode":"values"}`,
		`{"input":{"a":1,"a":{"b":2}}}`, `{"input":[],"config":{"configurable":{"thread_id":7}}}`,
		`{"input":{},"config":{"configurable":{"thread_id":"a\n"}}}`, `{"input":{"\u00e9":"\ud83d\ude00"}}`,
		` [ 1 , -0.5e+3 , true , false , null , "x" , { } , [ ] ] `, `"x"`, `0`, `{"\ud800":1}`,
		"", "  \n", "\ufeff{}", "{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":NaN}`, `{"a":Infinity}`, `{"a":-Infinity}`,
		`{"a":1,}`, `{'a':1}`, `{} {}`, `{}x`, `[`, `{"a"}`, `01`, "\"a\tb\"", `"\x"`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	}
}

var benchRunBody = []byte(`{"input":{"messages":[{"role":"user","content":"hello there"}]},"config":{"configurable":{"thread_id":"bench"}}}`)

// TestParseStrictJX_SameTree checks that both parsers accept the same bodies and build the same
// tree, at the request path's parse depth and at a shallow one (deep nodes).
func TestParseStrictJX_SameTree(t *testing.T) {
	for i, body := range jxBodies() {
		for _, depth := range []int{DefaultMaxInputDepth + 2, 3} {
			hw, hwErr := parseStrict([]byte(body), depth)
			jx, jxErr := parseStrictJX([]byte(body), depth)
			if !errors.Is(hwErr, jxErr) {
				t.Errorf("body %d %.60q depth %d: hand-written %v, jsontext %v", i, body, depth, hwErr, jxErr)
				continue
			}
			if hwErr == nil && !reflect.DeepEqual(hw, jx) {
				t.Errorf("body %d %.60q depth %d: trees differ", i, body, depth)
			}
		}
	}
}

// FuzzParseStrictJX_SameTree extends the comparison to generated bodies.
func FuzzParseStrictJX_SameTree(f *testing.F) {
	for _, b := range jxBodies() {
		if len(b) < 4096 {
			f.Add([]byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hw, hwErr := parseStrict(body, 4)
		jx, jxErr := parseStrictJX(body, 4)
		if !errors.Is(hwErr, jxErr) {
			t.Fatalf("%q: hand-written %v, jsontext %v", body, hwErr, jxErr)
		}
		if hwErr == nil && !reflect.DeepEqual(hw, jx) {
			t.Fatalf("%q: trees differ", body)
		}
	})
}

// BenchmarkParseStrict parses the invoke benchmarks' request body with each parser.
func BenchmarkParseStrict(b *testing.B) {
	for _, p := range []struct {
		name  string
		parse func([]byte, int) (*jsonTree, error)
	}{{"handwritten", parseStrict}, {"jsontext", parseStrictJX}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(benchRunBody)))
			for b.Loop() {
				if _, err := p.parse(benchRunBody, DefaultMaxInputDepth+2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// UseJSONTextParser switches the request path to parseStrictJX until the returned func is
// called (for the invoke benchmarks in package host_test).
func UseJSONTextParser() (restore func()) {
	parseBody = parseStrictJX
	return func() { parseBody = parseStrict }
}
