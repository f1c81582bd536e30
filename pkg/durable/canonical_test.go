package durable

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestAppendCanonical_Values_MatchPythonJSONDumps(t *testing.T) {
	t.Parallel()
	type custom struct {
		B int    `json:"b"`
		A string `json:"a"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"true", true, `true`},
		{"false", false, `false`},
		{"int", 42, `42`},
		{"negative int64", int64(-7), `-7`},
		{"uint64 max", uint64(math.MaxUint64), `18446744073709551615`},
		{"float integral", 1.0, `1.0`},
		{"float zero", 0.0, `0.0`},
		{"float negative zero", math.Copysign(0, -1), `-0.0`},
		{"float small fixed", 0.0001, `0.0001`},
		{"float below fixed", 0.00001, `1e-05`},
		{"float 1.5e-07", 1.5e-07, `1.5e-07`},
		{"float 1e15", 1e15, `1000000000000000.0`},
		{"float 1e16", 1e16, `1e+16`},
		{"float long exp", 1.2345678901234568e+17, `1.2345678901234568e+17`},
		{"float 0.1", 0.1, `0.1`},
		{"float third", 1.0 / 3, `0.3333333333333333`},
		{"float NaN", math.NaN(), `NaN`},
		{"float +Inf", math.Inf(1), `Infinity`},
		{"float -Inf", math.Inf(-1), `-Infinity`},
		{"float32", float32(0.5), `0.5`},
		{"number int", json.Number("12345678901234567890123"), `12345678901234567890123`},
		{"number minus zero", json.Number("-0"), `0`},
		{"number float", json.Number("2.50"), `2.5`},
		{"number exp", json.Number("1E2"), `100.0`},
		{"number overflow", json.Number("1e400"), `Infinity`},
		{"string plain", "abc", `"abc"`},
		{"string html kept", "<lambda>&", `"<lambda>&"`},
		{"string slash kept", "a/b", `"a/b"`},
		{"string quotes", `"\`, `"\"\\"`},
		{"string controls", "\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"string other control", "\x00\x1f", `"\u0000\u001f"`},
		{"string DEL", "\x7f", `"\u007f"`},
		{"string latin", "é", `"\u00e9"`},
		{"string BMP upper", "\uffee", `"\uffee"`},
		{"string emoji", "😀", `"\ud83d\ude00"`},
		{"string invalid utf8", "a\xffb", `"a\ufffdb"`},
		{"map sorted", map[string]any{"b": 1, "a": []any{2.0, "x"}, "A": nil}, `{"A":null,"a":[2.0,"x"],"b":1}`},
		{"map code point order", map[string]any{"é": 1, "z": 2, "😀": 3, "\uffee": 4}, `{"z":2,"\u00e9":1,"\uffee":4,"\ud83d\ude00":3}`},
		{"typed map", map[string]int{"y": 1, "x": 2}, `{"x":2,"y":1}`},
		{"typed slice", []float64{1, 2.5}, `[1.0,2.5]`},
		{"strings", []string{"b", "a"}, `["b","a"]`},
		{"struct via json", custom{B: 1, A: "x"}, `{"a":"x","b":1}`},
		{"pointer", &custom{B: 2}, `{"a":"","b":2}`},
		{"raw message", json.RawMessage(`{"z": 1.0, "a": [1, 2e0]}`), `{"a":[1,2.0],"z":1.0}`},
		{"int keyed map", map[int]string{2: "b", 10: "a"}, `{"10":"a","2":"b"}`},
		{"empty map", map[string]any{}, `{}`},
		{"nil slice", []any(nil), `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := appendCanonical(nil, tt.in)
			if err != nil {
				t.Fatalf("appendCanonical(%v): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Fatalf("appendCanonical(%#v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendCanonical_Unencodable_ReturnsError(t *testing.T) {
	t.Parallel()
	self := map[string]any{}
	self["self"] = self
	tests := []struct {
		name string
		in   any
	}{
		{"channel", make(chan int)},
		{"func", func() {}},
		{"cycle", self},
		{"bad number", json.Number("01")},
		{"bad raw", json.RawMessage(`{`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, err := appendCanonical(nil, tt.in); err == nil {
				t.Fatalf("appendCanonical(%s) = %s, want error", tt.name, got)
			}
		})
	}
}

func TestAppendPyFloat_RoundTrips_ParsesBack(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{1, -1, 0.1, 123.456, 1e-4, 9.999e-5, 1e16 - 2, 1e16, 5e-324, math.MaxFloat64, 2.5e300} {
		got := string(appendPyFloat(nil, f))
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || back != f {
			t.Errorf("appendPyFloat(%v) = %q, parses back as %v (%v)", f, got, back, err)
		}
		if !strings.ContainsAny(got, ".e") {
			t.Errorf("appendPyFloat(%v) = %q, has neither fraction nor exponent", f, got)
		}
	}
}

// reorderedJSON writes v (decoded with UseNumber) with object keys in reverse sorted order
// and whitespace, so that canonicalising it must undo both.
func reorderedJSON(t interface{ Fatalf(string, ...any) }, buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			reorderedJSON(t, buf, x[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(" , ")
			}
			reorderedJSON(t, buf, e)
		}
		buf.WriteString(" ]")
	default:
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatalf("marshal leaf %v: %v", x, err)
		}
		buf.Write(b)
	}
}

// hasNonFinite reports whether a decoded value holds a number that overflows float64, which
// canonicalises to Python's non-JSON Infinity token.
func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, _ := strconv.ParseFloat(string(x), 64)
			return math.IsInf(f, 0)
		}
	}
	return false
}

func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"b":1,"a":2}`, `{"x":[1,2.0,"<&>"],"y":{"z":null,"a":true}}`,
		`{"😀":"é","\u007f":"\u0000"}`, `[1e16,1e-05,-0.0,0]`, `"a\"b\\c"`, `123456789012345678901234567890`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() || hasNonFinite(v) {
			return
		}
		out, err := appendCanonical(nil, v)
		if err != nil {
			t.Fatalf("canonicalise %q: %v", data, err)
		}
		if !json.Valid(out) {
			t.Fatalf("canonical output %q of %q is not JSON", out, data)
		}
		var buf bytes.Buffer
		reorderedJSON(t, &buf, v)
		out2, err := appendCanonical(nil, json.RawMessage(buf.Bytes()))
		if err != nil {
			t.Fatalf("canonicalise reordered %q: %v", buf.Bytes(), err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("reordering changed canonical form:\n%s\n%s", out, out2)
		}
		out3, err := appendCanonical(nil, json.RawMessage(out))
		if err != nil || !bytes.Equal(out, out3) {
			t.Fatalf("canonical form not a fixed point: %s -> %s (%v)", out, out3, err)
		}
	})
}
