package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The models below cover every fast path of state_decode.go and the encoding/json fallbacks
// around them: named kinds, pointers, custom decoders, nested structs (case-insensitive keys),
// defaults that decoding reuses, required fields, Validate.

type equivInner struct {
	ID    int         `json:"id"`
	Name  string      `json:"name"`
	Inner *equivInner `json:"inner"`
}

type (
	equivLevel string
	equivTag   string
	equivCount int
	equivTags  []string
)

// equivText decodes through encoding.TextUnmarshaler.
type equivText string

func (t *equivText) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty text")
	}
	*t = equivText(strings.ToUpper(string(b)))
	return nil
}

// equivCustom decodes through json.Unmarshaler.
type equivCustom struct{ V string }

func (c *equivCustom) UnmarshalJSON(b []byte) error {
	if b[0] != '"' {
		return errors.New("equivCustom wants a string")
	}
	c.V = string(b)
	return nil
}

// equivKinds has more fields than maxStackFields and one of each kind.
type equivKinds struct {
	S     string          `json:"s"`
	L     equivLevel      `json:"l"`
	B     bool            `json:"b" durable:"required"`
	I8    int8            `json:"i8"`
	I64   int64           `json:"i64"`
	U     uint            `json:"u"`
	U16   uint16          `json:"u16"`
	UP    uintptr         `json:"up"`
	F32   float32         `json:"f32"`
	F64   float64         `json:"f64"`
	C     equivCount      `json:"c"`
	SS    []string        `json:"ss"`
	TT    []equivTag      `json:"tt"`
	NT    equivTags       `json:"nt"`
	Raw   json.RawMessage `json:"raw"`
	Num   json.Number     `json:"num"`
	Any   any             `json:"any"`
	PS    *string         `json:"ps"`
	PB    *bool           `json:"pb"`
	PI    *int            `json:"pi"`
	PU    *uint8          `json:"pu"`
	PF    *float64        `json:"pf"`
	PL    *equivLevel     `json:"pl"`
	Txt   equivText       `json:"txt"`
	PTxt  *equivText      `json:"ptxt"`
	Cus   equivCustom     `json:"cus"`
	In    equivInner      `json:"in"`
	PIn   *equivInner     `json:"pin"`
	M     map[string]int  `json:"m"`
	Arr   [2]string       `json:"arr"`
	Bytes []byte          `json:"bytes"`
	Ifs   []any           `json:"ifs"`
	E     error           `json:"e"`
}

// equivDefaults has defaults that encoding/json decodes into (slices, maps, pointers).
type equivDefaults struct {
	Name  string          `json:"name" durable:"required"`
	Tags  []string        `json:"tags"`
	Items []equivInner    `json:"items"`
	Ptr   *int            `json:"ptr"`
	PS    *string         `json:"ps"`
	Any   any             `json:"any"`
	M     map[string]any  `json:"m"`
	Raw   json.RawMessage `json:"raw"`
	Count int             `json:"count"`
}

func (d *equivDefaults) SetDefaults() {
	n, s, x := 7, "dflt", 3
	d.Tags = []string{"a", "b", "c"}
	d.Items = []equivInner{{ID: 1, Name: "one"}}
	d.Ptr, d.PS, d.Any = &n, &s, &x
	d.M = map[string]any{"k": "v"}
	d.Raw = json.RawMessage(`{"x":1}`)
	d.Count = 5
}

func (d *equivDefaults) Validate() error {
	if d.Count > 1000 {
		return fmt.Errorf("count %d over 1000", d.Count)
	}
	return nil
}

// equivChain is the model of the bench chain.
type equivChain struct {
	Seed  int      `json:"seed"`
	Trail []string `json:"trail"`
}

// equivModel runs the new and the reference code on fresh values of one model.
type equivModel struct {
	name   string
	schema *stateSchema
	newPtr func() any // a *S
}

func equivModelOf[S any](t testing.TB) equivModel {
	t.Helper()
	schema, err := newStateSchema(reflect.TypeFor[S]())
	if err != nil {
		t.Fatalf("newStateSchema: %v", err)
	}
	return equivModel{name: schema.name, schema: schema, newPtr: func() any { return new(S) }}
}

func equivModels(t testing.TB) []equivModel {
	return []equivModel{
		equivModelOf[modelState](t), equivModelOf[equivKinds](t),
		equivModelOf[equivDefaults](t), equivModelOf[equivChain](t),
	}
}

// sameOutcome fails unless the two results and errors are identical.
func sameOutcome(t *testing.T, what string, in []byte, got, want any, gotErr, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() ||
		!reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("%s(%q) error:\n got %v\nwant %v", what, in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s(%q) value:\n got %#v\nwant %#v", what, in, got, want)
	}
}

// checkEquivalent holds decode, check and the merge of a raw or map update to the reference
// for every model.
func checkEquivalent(t *testing.T, models []equivModel, in []byte) {
	t.Helper()
	for _, m := range models {
		got, want := m.newPtr(), m.newPtr()
		scratch := bytes.Clone(in) // scribbled over after the decode: nothing may alias it
		err := m.schema.decode(scratch, got)
		for i := range scratch {
			scratch[i] = '#'
		}
		sameOutcome(t, m.name+" decode", in, got, want, err, refDecode(m.schema, in, want))

		got, want = m.newPtr(), m.newPtr()
		sameOutcome(t, m.name+" check", in, got, want, m.schema.check(in, got), refCheck(m.schema, in, want))

		got, want = m.newPtr(), m.newPtr()
		_ = refDecode(m.schema, []byte(`{"source":"s","b":true,"name":"n"}`), got)
		_ = refDecode(m.schema, []byte(`{"source":"s","b":true,"name":"n"}`), want)
		sameOutcome(t, m.name+" merge raw", in, got, want,
			m.schema.merge(reflect.ValueOf(got).Elem(), got, json.RawMessage(in)),
			refMerge(m.schema, reflect.ValueOf(want).Elem(), want, json.RawMessage(in)))

		var u map[string]any
		if json.Unmarshal(in, &u) != nil || u == nil {
			continue
		}
		got, want = m.newPtr(), m.newPtr()
		sameOutcome(t, m.name+" merge update", in, got, want,
			m.schema.merge(reflect.ValueOf(got).Elem(), got, u),
			refMerge(m.schema, reflect.ValueOf(want).Elem(), want, u))
	}
}

// equivInputs are the table of TestStateDecode_MatchesReference and the seeds of
// FuzzStateDecode.
var equivInputs = []string{
	// objects, syntax, duplicates, keys
	``, ` `, `null`, `[]`, `"x"`, `{`, `{}`, ` {} `, "{}\v", "\u00a0{}", `{}{}`, `{} x`, `{"a":1,}`,
	`{"a" 1}`, `{"seed":1,"seed":2}`, `{"seed":"x","seed":3}`, `{"seed":3,"seed":"x"}`,
	`{"trail":["a"],"trail":null}`, `{"se\u0065d":4}`, `{"SEED":4}`, `{"s\u00e9":1}`,
	"{\"\xff\":1}", `{"\ud800":1}`, `{"x":[1,{"y":[}]}`, `{"x":1e999}`, `{"x":01}`, `{"x":-}`,
	`{"x":"\u12"}`, "{\"x\":\"\x01\"}", `{"b":true,"zz":1,"aa":{"q":[1,2,{}]}}`,
	// chain
	`{"seed":1,"trail":[]}`, `{"seed":1,"trail":["n0","n1"]}`, `{"seed":"2","trail":[" a ","\"q\"",null]}`,
	`{"seed":2.0}`, `{"seed":2.5}`, `{"seed":1e3}`, `{"seed":99999999999999999999}`, `{"seed":-0}`,
	`{"seed":null}`, `{"seed":true}`, `{"seed":[1]}`, `{"trail":"x"}`, `{"trail":[1]}`, `{"trail":[["a"]]}`,
	`{"trail":["a",1]}`, `{"trail":[ "a" , "b" ]}`, `{"trail":["\ud83d\ude00","\ud800x","a\u0000b","\u2028"]}`,
	"{\"trail\":[\"\xc3\x28\",\"ok\"]}", `{"trail":[null]}`, `{"trail":[]}`,
	// every kind
	`{"b":true,"s":"x","l":"lvl","i8":-128,"i64":9223372036854775807,"u":1,"u16":65535,"up":5,` +
		`"f32":1.5,"f64":-2e-3,"c":3,"ss":["a"],"tt":["t"],"nt":["n"],"raw":{"a":[1, 2]},"num":"12",` +
		`"any":"s","ps":"p","pb":false,"pi":1,"pu":255,"pf":0.5,"pl":"pl","txt":"abc","ptxt":"d",` +
		`"cus":"c","in":{"ID":1,"NAME":"x","inner":{"id":2}},"pin":{"id":3},"m":{"a":1},` +
		`"arr":["x","y","z"],"bytes":"aGk=","ifs":[1,"a",null,{}],"e":null}`,
	`{"b":1}`, `{"b":"true"}`, `{"b":null}`, `{"b":true,"i8":128}`, `{"b":true,"i8":-129}`, `{"b":true,"i8":"-5"}`,
	`{"b":true,"u":-1}`, `{"b":true,"u":"-1"}`, `{"b":true,"u16":65536}`, `{"b":true,"u":18446744073709551615}`,
	`{"b":true,"up":1.0}`, `{"b":true,"up":"1"}`, `{"b":true,"f32":3.5e38}`, `{"b":true,"f32":1e-50}`,
	`{"b":true,"f64":1e400}`, `{"b":true,"f64":"1"}`, `{"b":true,"s":1}`, `{"b":true,"s":"\"\\\/\b\f\n\r\t"}`,
	`{"b":true,"l":true}`, `{"b":true,"num":"x"}`, `{"b":true,"num":12.5}`, `{"b":true,"num":"1e5"}`,
	`{"b":true,"any":1}`, `{"b":true,"any":1e400}`, `{"b":true,"any":true}`, `{"b":true,"any":[1]}`,
	`{"b":true,"any":{"a":null}}`, `{"b":true,"any":null}`, `{"b":true,"ps":null}`, `{"b":true,"ps":1}`,
	`{"b":true,"pi":"7"}`, `{"b":true,"pi":7.0}`, `{"b":true,"pi":"x"}`, `{"b":true,"pu":256}`,
	`{"b":true,"pf":"1"}`, `{"b":true,"pl":1}`, `{"b":true,"txt":""}`, `{"b":true,"txt":1}`,
	`{"b":true,"ptxt":""}`, `{"b":true,"cus":1}`, `{"b":true,"in":{"id":"x"}}`, `{"b":true,"in":{"Inner":{"ID":"y"}}}`,
	`{"b":true,"pin":null}`, `{"b":true,"m":null}`, `{"b":true,"m":{"a":"b"}}`, `{"b":true,"raw":null}`,
	`{"b":true,"raw":"s"}`, `{"b":true,"bytes":"!"}`, `{"b":true,"ss":null}`, `{"b":true,"tt":[1]}`,
	`{"b":true,"nt":["a",null]}`, `{"b":true,"e":"x"}`, `{"b":true,"ifs":null}`, `{"b":true,"c":"x"}`,
	`{"b":true,"c":"12"}`,
	// modelState (state_test.go) and equivDefaults
	`{"source":"s"}`, `{"source":"s","records":[{"id":1,"name":"a"}],"count":"3","small":"7","extra":{"x":[]}}`,
	`{"source":"s","count":-1}`, `{"source":"s","any":{"a":1}}`, `{"name":"n"}`, `{"name":"n","tags":["x"]}`,
	`{"name":"n","tags":["x",1]}`, `{"name":"n","items":[{"name":"z"}]}`, `{"name":"n","ptr":9,"ps":"t","any":4}`,
	`{"name":"n","ptr":"x"}`, `{"name":"n","any":"s"}`, `{"name":"n","m":{"n":1}}`, `{"name":"n","raw":[1]}`,
	`{"name":"n","count":1001}`, `{"name":"n","count":1001,"tags":1}`, `{"name":1,"count":1001}`,
}

func TestStateDecode_MatchesReference(t *testing.T) {
	t.Parallel()
	models := equivModels(t)
	for _, in := range equivInputs {
		checkEquivalent(t, models, []byte(in))
	}
	// Around encoding/json's (and jsontext's) limit of 10 000 levels of nesting, under a known
	// key and an unknown one.
	for _, depth := range []int{9998, 9999, 10000, 10001} {
		for _, key := range []string{"any", "zz"} {
			in := `{"b":true,"` + key + `":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
			checkEquivalent(t, models, []byte(in))
		}
	}
}

// TestStateDecode_FastPathsTaken makes sure the table exercises the fast paths, not only the
// fallbacks: a chain state decodes without encoding/json.
func TestStateDecode_FastPathsTaken(t *testing.T) {
	schema, err := newStateSchema(reflect.TypeFor[equivChain]())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range schema.fields {
		if f.fast == fastNone {
			t.Fatalf("field %s has no fast path", f.name)
		}
	}
	in := []byte(`{"seed":3,"trail":["a","b"],"x":{"y":[1]}}`)
	var s equivChain
	// The race detector's sync.Pool drops a quarter of what it is given: count only without it.
	if n := testing.AllocsPerRun(100, func() { s = equivChain{}; _ = schema.decode(in, &s) }); n > 3 && !raceEnabled {
		t.Fatalf("decode of a chain state: %v allocations, want at most 3 (slice, two strings)", n)
	}
	if s.Seed != 3 || len(s.Trail) != 2 || s.Trail[1] != "b" {
		t.Fatalf("decoded %+v", s)
	}
}

func FuzzStateDecode(f *testing.F) {
	for _, in := range equivInputs {
		f.Add([]byte(in))
	}
	models := equivModels(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		checkEquivalent(t, models, in)
	})
}
