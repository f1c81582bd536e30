package durable

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

type record struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type modelState struct {
	Source  string         `json:"source" durable:"required"`
	Records []record       `json:"records"`
	Count   int            `json:"count"`
	Small   *int8          `json:"small"`
	Result  *string        `json:"result"`
	Flag    bool           `json:"flag"`
	Extra   map[string]any `json:"extra"`
	Any     any            `json:"any"`
	Level   string         `json:"level"`
	//lint:ignore U1000 never set: the schema must skip an unexported field
	hidden  int
	Skipped string `json:"-"`
}

func (s *modelState) SetDefaults() { s.Level = "info" }

func (s modelState) Validate() error {
	if s.Count < 0 {
		return errors.New("count must not be negative")
	}
	return nil
}

func modelSchema(t *testing.T) *stateSchema {
	t.Helper()
	s, err := newStateSchema(reflectTypeOf[modelState]())
	if err != nil {
		t.Fatalf("newStateSchema: %v", err)
	}
	return s
}

const emptyModelDump = `{"source":"s","records":[],"count":0,"small":null,"result":null,"flag":false,"extra":{},"any":null,"level":"info"}`

func TestStateSchema_Decode_ValidatesLikePython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{"defaults and order", `{"source":"s"}`, emptyModelDump, ""},
		{"unknown keys dropped", `{"zzz":1,"source":"s","hidden":3,"Skipped":"x"}`, emptyModelDump, ""},
		{"string int", `{"source":"s","count":"2"}`, strings.Replace(emptyModelDump, `"count":0`, `"count":2`, 1), ""},
		{"integral float", `{"source":"s","count":2.0}`, strings.Replace(emptyModelDump, `"count":0`, `"count":2`, 1), ""},
		{"exponent int", `{"source":"s","count":1e2}`, strings.Replace(emptyModelDump, `"count":0`, `"count":100`, 1), ""},
		{"pointer int lax", `{"source":"s","small":"7"}`, strings.Replace(emptyModelDump, `"small":null`, `"small":7`, 1), ""},
		{"nullable null", `{"source":"s","result":null,"any":null}`, emptyModelDump, ""},
		{"explicit empty list", `{"source":"s","records":[]}`, emptyModelDump, ""},
		{"nested", `{"source":"s","records":[{"id":1,"name":"a","x":0}]}`, strings.Replace(emptyModelDump, `"records":[]`, `"records":[{"id":1,"name":"a"}]`, 1), ""},
		{"html kept", `{"source":"<a&b>"}`, strings.Replace(emptyModelDump, `"s"`, `"<a&b>"`, 1), ""},
		{"missing required", `{"count":1}`, "", "validate state modelState: field 'source': field required"},
		{"fractional float for int", `{"source":"s","count":2.5}`, "", "validate state modelState: field 'count': expected an integer, got 2.5"},
		{"word for int", `{"source":"s","count":"two"}`, "", `validate state modelState: field 'count': expected an integer, got "two"`},
		{"out of range", `{"source":"s","small":"300"}`, "", `validate state modelState: field 'small': expected an integer, got "300"`},
		{"string for bool", `{"source":"s","flag":"yes"}`, "", "validate state modelState: field 'flag': expected bool, got JSON string"},
		{"number for string", `{"source":2}`, "", "validate state modelState: field 'source': expected string, got JSON number"},
		{"nested type error", `{"source":"s","records":[{"id":"x"}]}`, "", "validate state modelState: field 'records': id: expected int, got JSON string"},
		{"null for required string", `{"source":null}`, "", "validate state modelState: field 'source': null is not allowed for string"},
		{"null for list", `{"source":"s","records":null}`, "", "validate state modelState: field 'records': null is not allowed for []durable.record"},
		{"not an object", `[1]`, "", "validate state modelState: state must be a JSON object"},
		{"empty", ``, "", "validate state modelState: state must be a JSON object"},
		{"validate hook", `{"source":"s","count":-1}`, "", "validate state modelState: count must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := modelSchema(t)
			var s modelState
			err := schema.decode([]byte(tt.in), &s)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalidState) {
					t.Fatalf("decode(%s) error = %v, want %q wrapping ErrInvalidState", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode(%s): %v", tt.in, err)
			}
			got, err := schema.dump(&s)
			if err != nil || string(got) != tt.want {
				t.Fatalf("dump = %s, %v\nwant   %s", got, err, tt.want)
			}
		})
	}
}

func TestStateSchema_Merge_FollowsSection5(t *testing.T) {
	t.Parallel()
	note := "done"
	tests := []struct {
		name    string
		result  any
		want    string
		wantErr string
	}{
		{"nil unchanged", nil, emptyModelDump, ""},
		{"typed nil map unchanged", Update(nil), emptyModelDump, ""},
		{"update shallow", Update{"count": 3, "result": "ok"}, strings.NewReplacer(`"count":0`, `"count":3`, `"result":null`, `"result":"ok"`).Replace(emptyModelDump), ""},
		{"update float to int", Update{"count": 2.0}, strings.Replace(emptyModelDump, `"count":0`, `"count":2`, 1), ""},
		{"update generic list", Update{"records": []any{map[string]any{"id": 1, "name": "a"}}}, strings.Replace(emptyModelDump, `"records":[]`, `"records":[{"id":1,"name":"a"}]`, 1), ""},
		{"update typed list", Update{"records": []record{{ID: 2}}}, strings.Replace(emptyModelDump, `"records":[]`, `"records":[{"id":2,"name":""}]`, 1), ""},
		{"update nil slice stays list", Update{"records": []record(nil)}, emptyModelDump, ""},
		{"update null for nullable", Update{"result": nil}, emptyModelDump, ""},
		{"raw update", json.RawMessage(`{"flag":true}`), strings.Replace(emptyModelDump, `"flag":false`, `"flag":true`, 1), ""},
		{"update unknown key named", Update{"count": 3, "stauts": "x"}, "", "validate state modelState: field 'stauts': unknown field in update"},
		{"update first unknown key sorted", Update{"zz": 1, "aa": 2}, "", "validate state modelState: field 'aa': unknown field in update"},
		{"raw update unknown key", json.RawMessage(`{"flag":true,"x":1}`), "", "validate state modelState: field 'x': unknown field in update"},
		{"raw null", json.RawMessage(`null`), emptyModelDump, ""},
		{"whole state", modelState{Source: "t", Result: &note}, `{"source":"t","records":[],"count":0,"small":null,"result":"done","flag":false,"extra":{},"any":null,"level":""}`, ""},
		{"whole state pointer", &modelState{Source: "u"}, `{"source":"u","records":[],"count":0,"small":null,"result":null,"flag":false,"extra":{},"any":null,"level":""}`, ""},
		{"nil state pointer", (*modelState)(nil), emptyModelDump, ""},
		{"update null for string", Update{"source": nil}, "", "validate state modelState: field 'source': null is not allowed for string"},
		{"update wrong type", Update{"flag": "yes"}, "", "validate state modelState: field 'flag': expected bool, got JSON string"},
		{"update breaks validate", Update{"count": -5}, "", "validate state modelState: count must not be negative"},
		{"int result", 3, "", "unsupported state merge result: int"},
		{"list result", []any{1}, "", "unsupported state merge result: []interface {}"},
		{"string result", "x", "", "unsupported state merge result: string"},
		{"raw list", json.RawMessage(`[1]`), "", "unsupported state merge result: json.RawMessage"},
		{"other struct", record{}, "", "unsupported state merge result: durable.record"},
		{"route decision", StartChild("billing", nil, "ship"), "", "unsupported state merge result: durable.RouteDecision (a node handler returns a state update; return decisions from the node's route, WithRoute)"},
		{"route decision pointer", &RouteDecision{}, "", "unsupported state merge result: *durable.RouteDecision (a node handler returns a state update; return decisions from the node's route, WithRoute)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := modelSchema(t)
			var s modelState
			if err := schema.decode([]byte(`{"source":"s"}`), &s); err != nil {
				t.Fatal(err)
			}
			err := schema.merge(reflectValueOf(&s).Elem(), &s, tt.result)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("merge(%#v) error = %v, want %q", tt.result, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("merge(%#v): %v", tt.result, err)
			}
			got, _ := schema.dump(&s)
			if string(got) != tt.want {
				t.Fatalf("after merge(%#v):\n got %s\nwant %s", tt.result, got, tt.want)
			}
		})
	}
}

func TestStateSchema_Merge_UnsupportedWrapsSentinel(t *testing.T) {
	t.Parallel()
	schema := modelSchema(t)
	var s modelState
	err := schema.merge(reflectValueOf(&s).Elem(), &s, 1.5)
	if !errors.Is(err, ErrUnsupportedResult) {
		t.Fatalf("merge(1.5) = %v, want ErrUnsupportedResult", err)
	}
}

func TestStepInfo_Context_RoundTripsAndKeys(t *testing.T) {
	t.Parallel()
	if _, ok := StepInfoFrom(context.Background()); ok {
		t.Fatal("StepInfoFrom(background) ok = true")
	}
	ctx := graphrun.WithStepInfo(t.Context(), StepInfo{RunID: "run-1", Step: 7, Attempt: 2})
	info, ok := StepInfoFrom(ctx)
	if !ok || info.Attempt != 2 || info.IdempotencyKey() != "run-1:1:7" {
		t.Fatalf("StepInfoFrom = %+v, %v; key %q", info, ok, info.IdempotencyKey())
	}
}

func TestStepInfo_Context_BehavesLikeWithValue(t *testing.T) {
	t.Parallel()
	type otherKey struct{}
	parent, cancel := context.WithCancelCause(context.WithValue(t.Context(), otherKey{}, "outer"))
	ctx := graphrun.WithStepInfo(parent, StepInfo{RunID: "run-1", Step: 1})
	inner := graphrun.WithStepInfo(context.WithValue(ctx, otherKey{}, "inner"), StepInfo{RunID: "run-1", Step: 2})
	if info, ok := StepInfoFrom(inner); !ok || info.Step != 2 {
		t.Fatalf("StepInfoFrom(inner) = %+v, %v; want step 2", info, ok)
	}
	if info, ok := StepInfoFrom(ctx); !ok || info.Step != 1 {
		t.Fatalf("StepInfoFrom(ctx) = %+v, %v; want step 1", info, ok)
	}
	if v := inner.Value(otherKey{}); v != "inner" {
		t.Fatalf("inner.Value(otherKey) = %v", v)
	}
	if v := ctx.Value(otherKey{}); v != "outer" {
		t.Fatalf("ctx.Value(otherKey) = %v", v)
	}
	child, stop := context.WithCancel(inner)
	defer stop()
	cause := errors.New("stopped")
	cancel(cause)
	<-child.Done()
	if !errors.Is(context.Cause(child), cause) || !errors.Is(inner.Err(), context.Canceled) {
		t.Fatalf("cause %v, err %v; want the parent's cancellation", context.Cause(child), inner.Err())
	}
}

// TestExecuteNode_SeveralInvalidFields_SameErrorEveryTime: the merge of an update with more
// than one bad field names the first in declaration order, always, so that a redelivered
// step commits the same failure (issue #10, defect 9).
func TestExecuteNode_SeveralInvalidFields_SameErrorEveryTime(t *testing.T) {
	type many struct {
		A int `json:"a"`
		B int `json:"b"`
		C int `json:"c"`
		D int `json:"d"`
		E int `json:"e"`
	}
	b := NewManifestBuilder[many]("many")
	b.SetEntrypoint("n")
	_ = b.AddNode("n", func(context.Context, many) (any, error) {
		return Update{"e": "x", "d": "x", "c": "x", "b": "x", "a": "x"}, nil
	}, WithHandlerName("tests.many.n"), Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		_, err := g.ExecuteNode(context.Background(), "n", json.RawMessage(`{}`))
		if err == nil || !strings.Contains(err.Error(), "field 'a'") {
			t.Fatalf("error %v, want the first declared field 'a'", err)
		}
	}
}
