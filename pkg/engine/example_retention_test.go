package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// With a Retention, the repair pass keeps only the newest finished runs (here 8: one per
// index shard) and purges the rest; unfinished runs are never touched.
func ExampleRetention() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), SweepInterval: -1, Retention: engine.Retention{MaxRuns: 8}})
	ctx := context.Background()
	_ = e.Start(ctx)
	for i := range 40 {
		run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: fmt.Sprint("run-", i),
			Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
		_, _ = e.WaitRun(ctx, run.InstanceID, nil)
	}
	// Close waits for the dispatcher's handlings, which record each finished run in the index
	// right after its last commit (a run reads finished a moment before). Sweep needs no
	// dispatcher.
	_ = e.Close()
	_, _ = e.Sweep(ctx)
	kept, _ := e.ListRuns(ctx, engine.RunQuery{})
	_, err := e.GetRun(ctx, "run-0")
	fmt.Println(len(kept.Runs) <= 8, errors.Is(err, engine.ErrRunNotFound))
	// Output: true true
}
