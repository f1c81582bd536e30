package durable

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

type childTestState struct {
	N   int             `json:"n"`
	Out *childTestState `json:"out"`
}

func TestStartChild_NormalizeValidatesAndClears(t *testing.T) {
	t.Parallel()
	d := StartChild("kid", childTestState{N: 2}, "after").Into("out")
	d.NextNode, d.EventName = "x", "e"
	n, err := d.normalize()
	if err != nil || n.Child.Graph != "kid" || string(n.Child.Input) != `{"n":2,"out":null}` || n.Child.Into != "out" ||
		n.ResumeNode != "after" || n.NextNode != "" || n.EventName != "" {
		t.Fatalf("normalize = %+v (child %+v), %v", n, n.Child, err)
	}
	if n, err := StartChild("kid", nil, "after").normalize(); err != nil || string(n.Child.Input) != "{}" {
		t.Fatalf("nil input: %+v, %v", n.Child, err)
	}
	tests := []struct {
		name string
		d    RouteDecision
		want string
	}{
		{"no graph", StartChild("", nil, "after"), "action 'child' requires child.graph and resume_node"},
		{"no resume", StartChild("kid", nil, ""), "action 'child' requires child.graph and resume_node"},
		{"no child", RouteDecision{Action: ActionChild, ResumeNode: "after"}, "action 'child' requires child.graph and resume_node"},
		{"input not an object", StartChild("kid", []int{1}, "after"), "child run input must be a JSON object"},
		{"input not encodable", StartChild("kid", make(chan int), "after"), "encode child run input: json: unsupported type: chan int"},
	}
	for _, tt := range tests {
		if _, err := tt.d.normalize(); !errors.Is(err, ErrInvalidRouteDecision) || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Into copies; on other decisions it changes nothing; other actions drop a child.
	base := StartChild("kid", nil, "after")
	if _ = base.Into("out"); base.Child.Into != "" {
		t.Fatal("Into changed the decision it was called on")
	}
	if got := Next("a").Into("out"); !reflect.DeepEqual(got, Next("a")) {
		t.Fatalf("Into on next: %+v", got)
	}
	if n, _ := (RouteDecision{Action: ActionNext, NextNode: "a", Child: base.Child}).normalize(); n.Child != nil {
		t.Fatal("next kept a child")
	}
}

func TestStartChild_WireFormRoundTrips(t *testing.T) {
	t.Parallel()
	raw, err := StartChild("kid", json.RawMessage(`{"n":1}`), "after").Into("out").MarshalJSON()
	want := `{"action":"child","next_node":null,"event_name":null,"resume_node":"after","note":null,"child":{"graph":"kid","input":{"n":1},"into":"out"}}`
	if err != nil || string(raw) != want {
		t.Fatalf("wire form %s, %v", raw, err)
	}
	if raw, _ := Next("a").MarshalJSON(); string(raw) != `{"action":"next","next_node":"a","event_name":null,"resume_node":null,"note":null}` {
		t.Fatalf("next's wire form changed: %s", raw)
	}
	var d RouteDecision
	if err := json.Unmarshal([]byte(want), &d); err != nil || d.Child == nil || d.Child.Graph != "kid" || d.Child.Into != "out" || string(d.Child.Input) != `{"n":1}` {
		t.Fatalf("decode: %+v, %v", d, err)
	}
	// A route handler may return the decision as an object.
	got, err := normalizeRouteResult(map[string]any{"action": "child", "resume_node": "after", "child": map[string]any{"graph": "kid"}}, NodeDefinition{})
	if err != nil || got.Child == nil || got.Child.Graph != "kid" || string(got.Child.Input) != "{}" || got.Child.Into != "" {
		t.Fatalf("map decision: %+v, %v", got, err)
	}
}

func childTestGraph(t *testing.T, d RouteDecision) GraphRegistration[childTestState] {
	t.Helper()
	b := NewManifestBuilder[childTestState]("p")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", func(context.Context, childTestState) (any, error) { return nil, nil }, WithHandlerName("h.a"),
		WithRouteName("h.route"), WithRoute(func(context.Context, childTestState) (any, error) { return d, nil }))
	_ = b.AddNode("after", func(context.Context, childTestState) (any, error) { return nil, nil }, WithHandlerName("h.after"), Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestStartChild_ResolveRouteChecksResumeAndInto(t *testing.T) {
	t.Parallel()
	if d, err := childTestGraph(t, StartChild("kid", nil, "after").Into("out")).ResolveRoute(t.Context(), "a", []byte(`{}`)); err != nil || d.Action != ActionChild {
		t.Fatalf("valid child: %+v, %v", d, err)
	}
	_, err := childTestGraph(t, StartChild("kid", nil, "nope")).ResolveRoute(t.Context(), "a", []byte(`{}`))
	if !errors.Is(err, ErrUnknownNode) || err.Error() != "route decision references unknown resume_node 'nope' in graph 'p'" {
		t.Fatalf("unknown resume: %v", err)
	}
	_, err = childTestGraph(t, StartChild("kid", nil, "after").Into("outt")).ResolveRoute(t.Context(), "a", []byte(`{}`))
	if !errors.Is(err, ErrInvalidRouteDecision) || err.Error() != "child run into references unknown state field 'outt' of graph 'p'" {
		t.Fatalf("unknown into: %v", err)
	}
}

func TestGraphRegistration_SetStateField(t *testing.T) {
	t.Parallel()
	g := childTestGraph(t, Complete(""))
	got, err := g.r.SetStateField(t.Context(), []byte(`{"n":1}`), "out", []byte(`{"n":7,"extra":true}`))
	if err != nil || string(got) != `{"n":1,"out":{"n":7,"out":null}}` {
		t.Fatalf("set out: %s, %v", got, err)
	}
	var se *StateError
	if _, err := g.r.SetStateField(t.Context(), []byte(`{"n":1}`), "n", []byte(`{"n":7}`)); !errors.As(err, &se) || se.Field != "n" {
		t.Fatalf("a value that does not fit: %v", err)
	}
	if _, err := g.r.SetStateField(t.Context(), []byte(`{}`), "nope", []byte(`1`)); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("unknown field: %v", err)
	}
}
