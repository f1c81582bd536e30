package host

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fuzzInput is a plain Func input (decoded by json v2) with the shapes encoding/json treats
// specially: tags, the string option, embedded structs, pointers, interfaces, raw values,
// named and recursive types.
type fuzzInput struct {
	Name   string             `json:"name"`
	Count  int                `json:"count"`
	Small  int8               `json:"small"`
	Ratio  float64            `json:"ratio"`
	OK     bool               `json:"ok"`
	Quoted int                `json:"quoted,string"`
	Ptr    *string            `json:"ptr"`
	List   []fuzzItem         `json:"list"`
	Pair   [2]uint16          `json:"pair"`
	Map    map[string]any     `json:"map"`
	Named  map[label]*label   `json:"named"`
	Any    any                `json:"any"`
	Raw    json.RawMessage    `json:"raw"`
	Tree   *fuzzTree          `json:"tree"`
	Bytes  []byte             `json:"bytes"`
	Skip   string             `json:"-"`
	Inner  struct{ Deep any } `json:"inner"`
	fuzzEmbedded
	NoTag string
}

type fuzzItem struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
}

type label string

type fuzzTree struct {
	Kids []fuzzTree `json:"kids"`
	Up   *fuzzTree  `json:"up"`
	Leaf uint       `json:"leaf"`
}

type fuzzEmbedded struct {
	Shared string `json:"shared"`
}

// FuzzDecodeInput checks that Func's input decoder agrees with encoding/json: the same
// inputs decode, to the same values, and the same ones fail, with the same error.
func FuzzDecodeInput(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","count":2,"list":[{"role":"user","content":"hi"}]}`,
		`{"NAME":"case","Count":1.0,"small":300,"quoted":"12","ptr":null,"pair":[1,2,3]}`,
		`{"map":{"a":[1,{"b":null}]},"named":{"1":"x","y":null},"any":1e400,"raw":{"x":[ ]}}`,
		`{"tree":{"kids":[{"leaf":1},{"up":{"leaf":-1}}]},"bytes":"aGk=","-":"x","inner":{"deep":[true]}}`,
		`{"shared":"s","notag":"n","count":"two","list":{"role":1}}`,
		`{"name":"\u00e9\ud800","quoted":12,"raw":1.5e3,"quoted":"null","bytes":"!"}`,
		`{"count":9223372036854775808,"ratio":"x","ok":"true","name":null,"list":null}`,
	} {
		f.Add([]byte(seed))
	}
	if !plainInput(reflect.TypeFor[fuzzInput]()) || !plainInput(reflect.TypeFor[any]()) {
		f.Fatal("the fuzzed inputs are not plain: json v2 is not compared")
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[json.Number](), reflect.TypeFor[time.Time](),
		reflect.TypeFor[map[int]string](), reflect.TypeFor[struct{ N []*json.Number }](), reflect.TypeFor[chan int]()} {
		if plainInput(typ) {
			f.Fatalf("%v is plain, want decoded by encoding/json", typ)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the strict parse refused it before any Func saw it
		}
		var want fuzzInput
		wantErr := json.Unmarshal(raw, &want)
		var got fuzzInput
		err := decodeInput(raw, &got)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeInput(%s) = %v, encoding/json: %v", raw, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeInput(%s):\n got %#v\nwant %#v", raw, got, want)
		}
		var anyWant, anyGot any
		if json.Unmarshal(raw, &anyWant) == nil {
			if err := decodeInput(raw, &anyGot); err != nil || !reflect.DeepEqual(anyGot, anyWant) {
				t.Fatalf("decodeInput(%s) into any = %#v, %v; want %#v", raw, anyGot, err, anyWant)
			}
		}
	})
}
