package host

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshalDumps_Values_PythonStyle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"separators", json.RawMessage(`{"a":1,"b":[1,2]}`), `{"a": 1, "b": [1, 2]}`},
		{"raw keeps key order", json.RawMessage(`{"z":1,"a":2}`), `{"z": 1, "a": 2}`},
		{"map keys sorted", map[string]int{"z": 1, "a": 2}, `{"a": 2, "z": 1}`},
		{"non-ascii escaped lowercase", "é€", `"\u00e9\u20ac"`},
		{"astral as surrogate pair", "😀", `"\ud83d\ude00"`},
		{"html not escaped", "<a&b>", `"<a&b>"`},
		{"control chars", "a\nb\x01\x7f", `"a\nb\u0001\u007f"`},
		{"quotes and backslash", `"\`, `"\"\\"`},
		{"escaped slash normalised", json.RawMessage(`"a\/b"`), `"a/b"`},
		{"escaped unicode kept", json.RawMessage(`"\u00E9"`), `"\u00e9"`},
		{"separators inside strings untouched", json.RawMessage(`{"a":"x, y: z"}`), `{"a": "x, y: z"}`},
		{"whitespace in raw dropped", json.RawMessage("{ \"a\" :\n 1 }"), `{"a": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := marshalDumps(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMarshalCompact_Values_NoHTMLEscapingRawUTF8(t *testing.T) {
	t.Parallel()
	got, err := marshalCompact(map[string]string{"a": "<é&>"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"<é&>"}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := marshalCompact(math.NaN()); err == nil {
		t.Fatal("NaN encoded without error")
	}
}

func TestEncodeOutput_Kinds_WrappedUnlessObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"object", map[string]any{"a": "<b>"}, `{"output":{"a":"<b>"}}`},
		{"raw object keeps order", json.RawMessage(`{"z":1, "a":2}`), `{"output":{"z":1,"a":2}}`},
		{"string", "hé", `{"output":{"result":"hé"}}`},
		{"number", 42, `{"output":{"result":"42"}}`},
		{"array", []int{1, 2}, `{"output":{"result":"[1,2]"}}`},
		{"nil", nil, `{"output":{"result":"null"}}`},
		{"raw string", json.RawMessage(`"x"`), `{"output":{"result":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := appendOutput(nil, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
