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

// An embedded engine: in-memory storage, the dispatcher started, one run to completion.
func ExampleNew() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, err := engine.New(engine.Options{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		panic(err)
	}
	defer e.Close()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-1",
		Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
	run, _ = e.WaitRun(ctx, run.InstanceID, nil)
	fmt.Println(run.RuntimeStatus)
	// Output: Completed
}

// Without Start, a queue trigger drives the engine: each message is handed to
// HandleWorkItem, and deleted when it returns nil.
func ExampleEngine_HandleWorkItem() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	queue := memory.NewQueue()
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: queue, Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: "ticket-7",
		Input: json.RawMessage(`{"user_message":"I want a refund"}`)})
	trigger := func() {
		for {
			msgs, _ := queue.Receive(ctx, 1, engine.DefaultVisibilityTimeout)
			if len(msgs) == 0 {
				return
			}
			if err := e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err == nil {
				_ = queue.Delete(ctx, msgs[0])
			}
		}
	}
	trigger()
	waiting, _ := e.GetRun(ctx, run.InstanceID)
	fmt.Println(waiting.RuntimeStatus, string(waiting.CustomStatus))
	_ = e.RaiseEvent(ctx, run.InstanceID, "approval", json.RawMessage(`{"approved":true,"reviewer":"ana"}`))
	trigger()
	done, _ := e.GetRun(ctx, run.InstanceID)
	fmt.Println(done.RuntimeStatus)
	// Output:
	// Running {"graph_name":"support_agent","graph_version":"0.1.0","graph_hash":"af183f226f37e6fc","current_node":"classify_request","waiting_for_event":"approval","resume_node":"draft_reply"}
	// Completed
}

// One sweeper pass, as a timer trigger would run it.
func ExampleEngine_Sweep() {
	reg := durable.NewRegistry()
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	n, err := e.Sweep(context.Background())
	fmt.Println(n, err)
	// Output: 0 <nil>
}

// Start runs the embedded dispatcher in the background and returns at once. A run started
// before it waits on the queue until a worker takes it; Close stops the workers and waits
// for them.
func ExampleEngine_Start() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Concurrency: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-1",
		Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
	fmt.Println(run.RuntimeStatus)

	if err := e.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	run, _ = e.WaitRun(ctx, "run-1", nil)
	fmt.Println(run.RuntimeStatus)
	// Output:
	// Pending
	// Completed
}

// StartRun pins a run to the graph's latest registration and refuses an initial state that
// fails the graph's state model, storing nothing.
func ExampleEngine_StartRun() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()

	run, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-1",
		Input: json.RawMessage(`{"source_url":"https://example.com/data"}`)})
	fmt.Println(run.InstanceID, run.RuntimeStatus, run.GraphVersion, err)

	_, err = e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "run-2", Input: json.RawMessage(`{}`)})
	fmt.Println(errors.Is(err, durable.ErrInvalidState))
	_, err = e.GetRun(ctx, "run-2")
	fmt.Println(errors.Is(err, engine.ErrRunNotFound))
	// Output:
	// run-1 Pending 0.1.0 <nil>
	// true
	// true
}
