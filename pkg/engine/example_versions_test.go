package engine_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// pingGraph is "ping" at version: one node that completes.
func pingGraph(version string) durable.Graph {
	b := durable.NewManifestBuilder[counterState]("ping", durable.WithVersion(version))
	b.SetEntrypoint("pong")
	if err := b.AddNode("pong", incr, durable.WithHandlerName("ping.pong"), durable.Terminal()); err != nil {
		panic(err)
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// A process deployed without a version that still has unfinished runs learns so from the
// active run index, with a bounded read (here at most 1000 rows).
func ExampleEngine_UnregisteredVersions() {
	store, queue, payloads := memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()
	ctx := context.Background()
	before := durable.NewRegistry()
	_ = before.Register(pingGraph("1"))
	old, _ := engine.New(engine.Options{Registry: before, Store: store, Queue: queue, Payloads: payloads, Logger: quiet})
	for range 2 { // started, not run yet: unfinished
		if _, err := old.StartRun(ctx, engine.StartRunRequest{GraphName: "ping"}); err != nil {
			panic(err)
		}
	}

	after := durable.NewRegistry()
	_ = after.Register(pingGraph("2"))
	e, _ := engine.New(engine.Options{Registry: after, Store: store, Queue: queue, Payloads: payloads, Logger: quiet})
	versions, truncated, _ := e.UnregisteredVersions(ctx, 1000)
	for _, v := range versions {
		fmt.Println(v.GraphName, v.GraphVersion, v.Unfinished, truncated)
	}
	// Output: ping 1 2 false
}
