package durable

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

type withinState struct {
	N int `json:"n"`
}

// Issue #21: a wait carries its own timeout; the decision is a runtime value (its JSON keeps
// five keys, the graph hash does not see it), checked like the other targets.
func TestRouteDecision_Within_CarriedCheckedAndKeptOutOfTheWire(t *testing.T) {
	d := WaitForEvent("approval", "decide").Within(72*time.Hour, "expire")
	n, err := d.normalize()
	if err != nil || n.Timeout != 72*time.Hour || n.TimeoutNode != "expire" {
		t.Fatalf("normalize = %+v, %v", n, err)
	}
	raw, _ := d.MarshalJSON()
	if string(raw) != `{"action":"wait_for_event","next_node":null,"event_name":"approval","resume_node":"decide","note":null}` {
		t.Fatalf("wire form %s", raw)
	}
	if n, _ := Next("a").Within(time.Hour, "x").normalize(); n.Timeout != 0 || n.TimeoutNode != "" {
		t.Fatalf("next kept a timeout: %+v", n)
	}
	for _, bad := range []RouteDecision{
		WaitForEvent("e", "r").Within(-time.Second, ""),
		WaitForEvent("e", "r").Within(0, "x"),
	} {
		if _, err := bad.normalize(); !errors.Is(err, ErrInvalidRouteDecision) {
			t.Errorf("%+v: %v, want ErrInvalidRouteDecision", bad, err)
		}
	}

	build := func(d RouteDecision) GraphRegistration[withinState] {
		b := NewManifestBuilder[withinState]("g")
		b.SetEntrypoint("a")
		_ = b.AddNode("a", func(context.Context, withinState) (any, error) { return nil, nil }, WithHandlerName("h.a"),
			WithRouteName("h.route"), WithRoute(func(context.Context, withinState) (any, error) { return d, nil }))
		_ = b.AddNode("b", func(context.Context, withinState) (any, error) { return nil, nil }, WithHandlerName("h.b"), Terminal())
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	plain, timed := build(WaitForEvent("e", "b")), build(WaitForEvent("e", "b").Within(time.Hour, "b"))
	if plain.Manifest().GraphHash != timed.Manifest().GraphHash {
		t.Fatal("a wait's timeout changed the graph hash")
	}
	if got, err := timed.ResolveRoute(t.Context(), "a", []byte(`{}`)); err != nil || got.Timeout != time.Hour || got.TimeoutNode != "b" {
		t.Fatalf("ResolveRoute = %+v, %v", got, err)
	}
	_, err = build(WaitForEvent("e", "b").Within(time.Hour, "nope")).ResolveRoute(t.Context(), "a", []byte(`{}`))
	if !errors.Is(err, ErrUnknownNode) || err.Error() != "route decision references unknown timeout_node 'nope' in graph 'g'" {
		t.Fatalf("unknown timeout node: %v", err)
	}
}

// Within bounds one wait: no approval within 72 hours continues at "expire", whose handlers
// read durable.StepInfoFrom(ctx).TimedOutWaitingFor.
func ExampleRouteDecision_Within() {
	d := WaitForEvent("approval", "decide").Within(72*time.Hour, "expire")
	fmt.Println(d.EventName, d.ResumeNode, d.Timeout, d.TimeoutNode)
	// Output: approval decide 72h0m0s expire
}
