package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// The embedded default: an engine on the in-memory twins.
func Example() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", Input: json.RawMessage(`{"source_url":"s"}`)})
	run, _ = e.WaitRun(ctx, run.InstanceID, nil)
	fmt.Println(run.RuntimeStatus)
	// Output: Completed
}

// Stores reject what Azure Table storage would reject.
func ExampleNewStore() {
	s := memory.NewStore()
	_, err := s.Submit(context.Background(), []engine.Op{{Kind: engine.OpInsert,
		Entity: engine.Entity{PartitionKey: "run-1", RowKey: "bad/key", Properties: map[string]any{"V": int64(1)}}}})
	fmt.Println(err != nil)
	// Output: true
}

// A received message stays hidden for its visibility timeout.
func ExampleNewQueue() {
	q := memory.NewQueue()
	ctx := context.Background()
	_ = q.Enqueue(ctx, []byte(`{"v":1}`), 0)
	msgs, _ := q.Receive(ctx, 32, engine.DefaultVisibilityTimeout)
	again, _ := q.Receive(ctx, 32, engine.DefaultVisibilityTimeout)
	fmt.Println(len(msgs), msgs[0].DequeueCount, len(again))
	// Output: 1 1 0
}

// Payloads too large for a table row.
func ExampleNewPayloadStore() {
	p := memory.NewPayloadStore()
	ctx := context.Background()
	_ = p.Put(ctx, "run-1/1/state", []byte(`{"big":true}`))
	data, _ := p.Get(ctx, "run-1/1/state")
	fmt.Println(string(data))
	// Output: {"big":true}
}

// A message delivered too often is moved to the poison queue (what the Functions host does at
// maxDequeueCount, and the embedded dispatcher at Options.MaxDequeueCount); the engine's
// repair pass reads it from there.
func ExampleQueue_PoisonQueue() {
	ctx := context.Background()
	q := memory.NewQueue()
	_ = q.Enqueue(ctx, []byte(`{"v":1,"run_id":"r","gen":1,"step":0}`), 0)
	msgs, _ := q.Receive(ctx, 1, 0)
	poison := q.PoisonQueue()
	_ = poison.Enqueue(ctx, msgs[0].Body, 0)
	_ = q.Delete(ctx, msgs[0])
	moved, _ := poison.Receive(ctx, engine.MaxReceive, 0)
	fmt.Println(q.Len(), len(moved), moved[0].DequeueCount)
	// Output: 0 1 1
}

// A store on a byte budget refuses a write that would pass it, and writes nothing.
func ExampleWithBudget() {
	b, _ := membudget.New(membudget.Limits{Total: 4 << 20})
	s := memory.NewStore(memory.WithBudget(b))
	ctx := membudget.NewWork(context.Background(), "")
	row := func(pk string) []engine.Op {
		return []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: "r",
			Properties: map[string]any{"V": strings.Repeat("v", 30000)}}}}
	}
	var err error
	n := 0
	for ; err == nil; n++ {
		_, err = s.Submit(ctx, row(fmt.Sprint("run-", n)))
	}
	fmt.Println(errors.Is(err, engine.ErrStorageFull), s.Len() == n-1, b.Used() <= 4<<20)
	// Output: true true true
}
