package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A run that continued as new (durable.ContinueAsNew) has a generation; History reads the
// current one, GenerationHistory the one before it too. Older generations are gone.
func ExampleEngine_GenerationHistory() {
	type laps struct {
		Lap   int `json:"lap"`
		Round int `json:"round"`
	}
	b := durable.NewManifestBuilder[laps]("laps")
	b.SetEntrypoint("lap")
	_ = b.AddStep("lap", func(_ context.Context, s laps) (laps, error) { s.Lap++; return s, nil },
		durable.WithDecide(func(_ context.Context, s laps) (durable.RouteDecision, error) {
			if s.Round < 3 {
				return durable.ContinueAsNew(laps{Round: s.Round + 1}), nil
			}
			return durable.Complete("done"), nil
		}))
	g, _ := b.Build()
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "laps", InstanceID: "l1", Input: json.RawMessage(`{}`)})
	run, _ := e.WaitRun(ctx, "l1", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	fmt.Println(run.RuntimeStatus, "generation", run.Generation)
	for gen := run.Generation; gen >= run.Generation-2; gen-- {
		h, err := e.GenerationHistory(ctx, "l1", gen, "", 100)
		var gone *engine.GenerationNotKeptError
		switch {
		case errors.As(err, &gone):
			fmt.Println(gen, "gone")
		case err == nil:
			fmt.Println(gen, h.Events[0].Type, "...", h.Events[len(h.Events)-1].Type)
		}
	}
	// Output:
	// Completed generation 3
	// 3 continued_as_new ... run_completed
	// 2 continued_as_new ... route_resolved
	// 1 gone
}
