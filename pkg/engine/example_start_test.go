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

// Start runs the embedded dispatcher in the background and returns at once. A run started
// before it waits on the queue until a worker takes it; Close stops the workers and waits
// for them.
func ExampleEngine_Start() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, err := memory.NewEngine(reg, engine.Options{Concurrency: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-1",
		Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
	fmt.Println(run.Status)

	if err := e.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	run, _ = e.WaitRun(ctx, "run-1", nil)
	fmt.Println(run.Status)
	// Output:
	// Pending
	// Completed
}

// StartRun pins a run to the graph's latest registration and refuses an initial state that
// fails the graph's state model, storing nothing.
func ExampleEngine_StartRun() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, _ := memory.NewEngine(reg, engine.Options{})
	ctx := context.Background()

	run, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-1",
		Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
	fmt.Println(run.InstanceID, run.Status, run.GraphVersion, err)

	_, err = e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-2", Input: json.RawMessage(`{}`)})
	fmt.Println(errors.Is(err, durable.ErrInvalidState))
	_, err = e.GetRun(ctx, "run-2")
	fmt.Println(errors.Is(err, engine.ErrRunNotFound))
	// Output:
	// run-1 Pending 0.1.0 <nil>
	// true
	// true
}
