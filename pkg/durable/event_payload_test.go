package durable_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

func TestGraphRegistration_EventPayload_TypedOnly(t *testing.T) {
	typed, untyped := buildTyped(t), buildMap(t)
	p, ok := payloadOf(typed, "approval")
	if !ok || p.Type != reflect.TypeFor[approval]() {
		t.Fatalf("typed EventPayload = %+v, %v; want the approval type", p, ok)
	}
	if _, ok := payloadOf(untyped, "approval"); ok {
		t.Error("an untyped handler has a payload type")
	}
	if _, ok := payloadOf(typed, "nope"); ok {
		t.Error("an unknown event has a payload type")
	}
	if _, ok := payloadOf(durable.GraphRegistration[ticket]{}, "approval"); ok {
		t.Error("the zero registration has a payload type")
	}
}

func ExampleEventPayload() {
	type Doc struct {
		Approved bool `json:"approved"`
	}
	type Approval struct {
		OK       bool   `json:"ok" durable:"required"`
		Reviewer string `json:"reviewer"`
	}
	b := durable.NewManifestBuilder[Doc]("docs")
	b.SetEntrypoint("review")
	_ = b.AddStep("review", func(_ context.Context, d Doc) (Doc, error) { return d, nil },
		durable.WithHandlerName("docs.review"), durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, d Doc, a Approval) (Doc, error) { return d, nil })
	g, _ := b.Build()
	var graph durable.Graph = g
	if typer, ok := graphrun.Of(graph).(graphrun.EventPayloadTyper[durable.EventPayload]); ok {
		p, _ := typer.EventPayload("approval")
		fmt.Println(p.Type.Name(), p.Required)
	}
	// Output: Approval [ok]
}

// payloadOf returns what the runs API reads of g's payload type for event.
func payloadOf(g durable.Graph, event string) (durable.EventPayload, bool) {
	typer, ok := graphrun.Of(g).(graphrun.EventPayloadTyper[durable.EventPayload])
	if !ok {
		return durable.EventPayload{}, false
	}
	return typer.EventPayload(event)
}
