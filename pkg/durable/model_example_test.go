package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// OrderState is a state model: required fields are tagged, slices default to [].
type OrderState struct {
	OrderID string   `json:"order_id" durable:"required"`
	Total   int      `json:"total"`
	Notes   []string `json:"notes"`
}

func priceOrder(_ context.Context, s OrderState) (any, error) {
	return durable.Update{"total": 42, "notes": append(s.Notes, "priced")}, nil
}

func shipOrder(_ context.Context, s OrderState) (any, error) {
	s.Notes = append(s.Notes, "shipped")
	return s, nil // a whole state replaces the old one
}

func ExampleNewManifestBuilder() {
	b := durable.NewManifestBuilder[OrderState]("orders", durable.WithMetadata(map[string]any{"team": "shop"}))
	b.SetEntrypoint("price")
	_ = b.AddNode("price", priceOrder, durable.WithHandlerName("shop.price"), durable.WithNext("ship"))
	_ = b.AddNode("ship", shipOrder, durable.WithHandlerName("shop.ship"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	m := g.Manifest()
	fmt.Println(m.GraphName, m.Version, m.StateModelName, m.NodeNames(), len(m.GraphHash))

	b2 := durable.NewManifestBuilder[OrderState]("broken")
	b2.SetEntrypoint("a")
	_ = b2.AddNode("a", priceOrder)
	_ = b2.AddNode("orphan", shipOrder)
	_, err = b2.Build()
	fmt.Println(err, errors.Is(err, durable.ErrInvalidGraph))
	// Output:
	// orders 0.1.0 OrderState [price ship] 16
	// nodes unreachable from entrypoint 'a': ['orphan'] true
}

func ExampleGraphRegistration_ExecuteNode() {
	b := durable.NewManifestBuilder[OrderState]("orders")
	b.SetEntrypoint("price")
	_ = b.AddNode("price", priceOrder, durable.WithNext("ship"))
	_ = b.AddNode("ship", shipOrder, durable.Terminal())
	g, _ := b.Build()

	ctx := context.Background()
	state, _ := g.ExecuteNode(ctx, "price", json.RawMessage(`{"order_id":"o-1","total":"1","unknown":true}`))
	fmt.Println(string(state))
	d, _ := g.ResolveRoute(ctx, "price", state)
	fmt.Println(d.Action, d.NextNode)
	state, _ = g.ExecuteNode(ctx, d.NextNode, state)
	d, _ = g.ResolveRoute(ctx, "ship", state)
	fmt.Println(string(state), d.Action)

	_, err := g.ExecuteNode(ctx, "price", json.RawMessage(`{"total":1}`))
	fmt.Println(err)
	// Output:
	// {"order_id":"o-1","total":42,"notes":["priced"]}
	// next ship
	// {"order_id":"o-1","total":42,"notes":["priced","shipped"]} complete
	// validate state OrderState: field 'order_id': field required
}

func ExampleWaitForEvent() {
	d := durable.WaitForEvent("approval", "draft_reply").WithNote("awaiting human approval")
	raw, _ := json.Marshal(d)
	fmt.Println(string(raw))

	var back durable.RouteDecision
	err := json.Unmarshal([]byte(`{"action":"next","next_node":null}`), &back)
	fmt.Println(err)
	// Output:
	// {"action":"wait_for_event","next_node":null,"event_name":"approval","resume_node":"draft_reply","note":"awaiting human approval"}
	// action 'next' requires next_node
}

func ExampleRegistry() {
	build := func(version string) durable.Graph {
		b := durable.NewManifestBuilder[OrderState]("orders", durable.WithVersion(version))
		b.SetEntrypoint("price")
		_ = b.AddNode("price", priceOrder, durable.Terminal())
		g, _ := b.Build()
		return g
	}
	r := durable.NewRegistry()
	v1, v2 := build("1.0.0"), build("2.0.0")
	_ = r.Register(v1)
	_ = r.Register(v2)

	latest, _ := r.Latest("orders")
	pinned, _ := r.Lookup("orders", v1.Manifest().GraphHash)
	fmt.Println(latest.Manifest().Version, pinned.Manifest().Version, len(r.List()))

	_, err := r.Latest("payments")
	fmt.Println(err, errors.Is(err, durable.ErrUnknownGraph))
	// Output:
	// 2.0.0 1.0.0 1
	// unknown graph 'payments' true
}

func ExampleGraphManifest_ComputeHash() {
	m := durable.GraphManifest{
		GraphName: "data_pipeline", Version: "0.1.0", StateModelName: "PipelineState", Entrypoint: "extract",
		Nodes: []durable.NodeDefinition{
			{Name: "extract", HandlerName: "examples.data_pipeline.graph.extract", NextNode: "transform"},
			{Name: "transform", HandlerName: "examples.data_pipeline.graph.transform", NextNode: "load"},
			{Name: "load", HandlerName: "examples.data_pipeline.graph.load", Terminal: true},
		},
		Metadata: map[string]any{"example": true, "profile": "etl"},
	}
	h, _ := m.ComputeHash()
	fmt.Println(h)
	// Output: 6135ea2aa13d431c
}

func ExampleStepInfoFrom() {
	ctx := graphrun.WithStepInfo(context.Background(), durable.StepInfo{RunID: "run-7", Step: 3, Attempt: 2})
	if info, ok := durable.StepInfoFrom(ctx); ok {
		fmt.Println(info.IdempotencyKey(), info.Attempt)
	}
	// Output: run-7:1:3 2
}
