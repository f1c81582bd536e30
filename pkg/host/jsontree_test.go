package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// strictBodies are the bodies the strict parser is checked on: the validate and fuzz tests'
// inputs and the strictness edge cases (duplicates, escapes, surrogates, BOM, bad UTF-8,
// trailing data, depth at and past 10 000 levels).
func strictBodies() []string {
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
		`{"a\ud800b":"\udc00\ud83d\u0041","a\ufffdb":2}`,
		"", "  \n", "\ufeff{}", "{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":NaN}`, `{"a":Infinity}`, `{"a":-Infinity}`,
		`{"a":1,}`, `{'a':1}`, `{} {}`, `{}x`, `[`, `{"a"}`, `01`, "\"a\tb\"", `"\x"`, `{"a":1 "b":2}`, `[1 2]`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	}
}

var benchRunBody = []byte(`{"input":{"messages":[{"role":"user","content":"hello there"}]},"config":{"configurable":{"thread_id":"bench"}}}`)

// TestParseStrict_MatchesEncodingJSON checks the strict parser against encoding/json on every
// body, at the request path's parse depth and at a shallow one (deep nodes).
func TestParseStrict_MatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for i, body := range strictBodies() {
		for _, depth := range []int{DefaultMaxInputDepth + 2, 3} {
			checkTreeAgainstEncodingJSON(t, []byte(body), depth)
		}
		if t.Failed() {
			t.Fatalf("body %d: %.80q", i, body)
		}
	}
}

// FuzzParseStrict checks the strict parser against encoding/json on generated bodies.
func FuzzParseStrict(f *testing.F) {
	for _, b := range strictBodies() {
		if len(b) < 4096 {
			f.Add([]byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkTreeAgainstEncodingJSON(t, body, 4)
	})
}

// checkTreeAgainstEncodingJSON fails t unless parseStrict(body, maxDepth) accepts exactly what
// encoding/json accepts as UTF-8 (json.Valid, at most 10 000 levels), and its tree holds what
// encoding/json's tokens say, with our rules on top: a repeated key keeps its first position
// and takes the last value, containers past maxDepth are kept as their text.
func checkTreeAgainstEncodingJSON(t testing.TB, body []byte, maxDepth int) {
	t.Helper()
	tree, err := parseStrict(body, maxDepth)
	if !utf8.Valid(body) || !json.Valid(body) {
		if !errors.Is(err, errInvalidJSON) {
			t.Errorf("parseStrict(%.80q) = %v, want errInvalidJSON", body, err)
		}
		return
	}
	if err != nil {
		t.Errorf("parseStrict(%.80q) refused what encoding/json accepts: %v", body, err)
		return
	}
	want, err := tokenValue(numberDecoder(body), 1, maxDepth)
	if err != nil {
		t.Errorf("encoding/json tokens of %.80q: %v", body, err)
		return
	}
	if got := treeValue(tree, tree.root); !reflect.DeepEqual(got, want) {
		t.Errorf("tree of %.80q differs:\nparseStrict   %#v\nencoding/json %#v", body, got, want)
	}
}

// oracleMember and deepValue are the shapes both sides are turned into: objects as their
// members in document order, containers past the parse depth as their text.
type oracleMember struct {
	Key   string
	Value any
}
type deepValue string

// numberDecoder is an encoding/json decoder of data that keeps numbers as their text.
func numberDecoder(data []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec
}

// tokenValue reads one value from encoding/json's token stream.
func tokenValue(dec *json.Decoder, depth, maxDepth int) (any, error) {
	if depth > maxDepth {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if raw[0] == '{' || raw[0] == '[' {
			return deepValue(raw), nil
		}
		return tokenValue(numberDecoder(raw), depth, depth) // a scalar
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('['):
		items := []any{}
		for dec.More() {
			v, err := tokenValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		_, err := dec.Token()
		return items, err
	case json.Delim('{'):
		members := []oracleMember{}
	next:
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := tokenValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			for i := range members {
				if members[i].Key == k.(string) {
					members[i].Value = v // our rule: the last value, at the first position
					continue next
				}
			}
			members = append(members, oracleMember{Key: k.(string), Value: v})
		}
		_, err := dec.Token()
		return members, err
	}
	if n, ok := tok.(json.Number); ok {
		return string(n), nil
	}
	return tok, nil
}

// treeValue turns node v of tree into the shapes tokenValue builds.
func treeValue(tree *jsonTree, v int32) any {
	n := tree.nodes[v]
	switch {
	case n.deep:
		return deepValue(tree.raw(v))
	case n.kind == kindNull:
		return nil
	case n.kind == kindBool:
		return string(tree.raw(v)) == "true"
	case n.kind == kindNumber:
		return string(tree.raw(v))
	case n.kind == kindString:
		return tree.str(v)
	case n.kind == kindArray:
		items := []any{}
		for c := n.child; c >= 0; c = tree.nodes[c].next {
			items = append(items, treeValue(tree, c))
		}
		return items
	}
	members := []oracleMember{}
	for c := n.child; c >= 0; c = tree.nodes[c].next {
		members = append(members, oracleMember{Key: tree.key(c), Value: treeValue(tree, tree.nodes[c].val)})
	}
	return members
}

// TestParseStrict_ReusesDecoders parses bodies one after another, valid and not: a pooled
// decoder must not carry anything from one body to the next.
func TestParseStrict_ReusesDecoders(t *testing.T) {
	t.Parallel()
	for range 3 {
		for _, body := range []string{`{"a":[1,`, `{"a":1}`, `{} x`, `[{"b":"\u00e9"}]`, ``, `"s"`} {
			checkTreeAgainstEncodingJSON(t, []byte(body), 10)
		}
	}
}

// BenchmarkParseStrict parses the invoke benchmarks' request body.
func BenchmarkParseStrict(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRunBody)))
	for b.Loop() {
		if _, err := parseStrict(benchRunBody, DefaultMaxInputDepth+2); err != nil {
			b.Fatal(err)
		}
	}
}
