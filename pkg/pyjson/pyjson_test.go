package pyjson

import (
	"encoding/json"
	"testing"
)

func TestMarshal_Values_WritePythonDumpsStyle(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"object separators", struct {
			A int    `json:"a"`
			B []bool `json:"b"`
		}{1, []bool{true, false}}, `{"a": 1, "b": [true, false]}`},
		{"html kept", "<lambda> & co", `"<lambda> & co"`},
		{"controls", "a\nb\tc\rd\be\ff\x01\x7f", `"a\nb\tc\rd\be\ff\u0001\u007f"`},
		{"non-ascii lowercase hex", "é€", `"\u00e9\u20ac"`},
		{"surrogate pair", "😀", `"\ud83d\ude00"`},
		{"quotes and backslash", `"\`, `"\"\\"`},
		{"slash kept", "a/b", `"a/b"`},
		{"raw message order kept", json.RawMessage(`{"z": 1,"a" :[ ] , "m":{"é":null}}`), `{"z": 1, "a": [], "m": {"\u00e9": null}}`},
		{"raw escapes normalised", json.RawMessage(`"\u00E9\/\u003c"`), `"\u00e9/<"`},
		{"separators inside strings untouched", map[string]string{"k": "a, b: c"}, `{"k": "a, b: c"}`},
		{"null", nil, `null`},
		{"numbers verbatim", json.RawMessage(`[1.50, -2e10]`), `[1.50, -2e10]`},
		{"line separator", "\u2028", `"\u2028"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Marshal = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMarshal_Unencodable_ReturnsError(t *testing.T) {
	if _, err := Marshal(make(chan int)); err == nil {
		t.Fatal("Marshal(chan) succeeded, want error")
	}
}

func FuzzAppendReformat(f *testing.F) {
	for _, s := range []string{`{"a": "é😀", "b": [1, null]}`, `"\ud83d\ude00"`, `"\ud83d"`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if !json.Valid(src) {
			return
		}
		out := AppendReformat(nil, src)
		if !json.Valid(out) {
			t.Fatalf("reformat of %q is invalid JSON: %q", src, out)
		}
		for _, c := range out {
			if c >= 0x7f || (c < 0x20) {
				t.Fatalf("reformat of %q has a raw byte %#x: %q", src, c, out)
			}
		}
		var a, b any
		_ = json.Unmarshal(src, &a)
		_ = json.Unmarshal(out, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("reformat changed the value: %s vs %s", ja, jb)
		}
	})
}
