package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// exampleTicket is the state of exampleOutageGraph.
type exampleTicket struct {
	Label string `json:"label"`
}

// exampleOutageGraph builds "classify_ticket": classify (which calls a model that is down
// while down is set) → done.
func exampleOutageGraph(down *atomic.Bool, calls *atomic.Int64) durable.GraphRegistration[exampleTicket] {
	b := durable.NewManifestBuilder[exampleTicket]("classify_ticket")
	b.SetEntrypoint("classify")
	_ = b.AddNode("classify", func(context.Context, exampleTicket) (any, error) {
		calls.Add(1)
		if down.Load() {
			return nil, durable.NonRetryable(errors.New("model endpoint unavailable (503)"))
		}
		return durable.Update{"label": "refund"}, nil
	}, durable.WithNext("done"))
	_ = b.AddNode("done", func(context.Context, exampleTicket) (any, error) { return nil, nil }, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// RewindRun continues a Failed run from the step that failed, once the outage that failed it
// is over.
func ExampleEngine_RewindRun() {
	var down atomic.Bool
	var calls atomic.Int64
	reg := durable.NewRegistry()
	_ = reg.Register(exampleOutageGraph(&down, &calls))
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()

	down.Store(true)
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "classify_ticket", InstanceID: "ticket-1", Input: json.RawMessage(`{}`)})
	run, _ := e.WaitRun(ctx, "ticket-1", nil)
	fmt.Println(run.RuntimeStatus)

	down.Store(false)
	if err := e.RewindRun(ctx, "ticket-1", "model endpoint back"); err != nil {
		panic(err)
	}
	run, _ = e.WaitRun(ctx, "ticket-1", nil)
	fmt.Println(run.RuntimeStatus, calls.Load())

	var nf *engine.RunNotFailedError
	fmt.Println(errors.As(e.RewindRun(ctx, "ticket-1", ""), &nf), nf)
	// Output:
	// Failed
	// Completed 2
	// true run 'ticket-1' is Completed; only a Failed run can be rewound
}

// RewindRuns rewinds every run that failed in a window, a page of failures at a time, after
// an outage.
func ExampleEngine_RewindRuns() {
	var down atomic.Bool
	var calls atomic.Int64
	reg := durable.NewRegistry()
	_ = reg.Register(exampleOutageGraph(&down, &calls))
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()

	outageStart := time.Now().Add(-time.Second)
	down.Store(true)
	for _, id := range []string{"t1", "t2", "t3"} {
		_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "classify_ticket", InstanceID: id, Input: json.RawMessage(`{}`)})
		_, _ = e.WaitRun(ctx, id, nil)
	}
	down.Store(false)

	f := engine.RewindFilter{GraphName: "classify_ticket", FailedAfter: outageStart, Limit: 2, Reason: "outage over"}
	rewound := 0
	for {
		res, err := e.RewindRuns(ctx, f)
		if err != nil {
			panic(err)
		}
		rewound += len(res.Rewound)
		if f.ContinuationToken = res.ContinuationToken; f.ContinuationToken == "" {
			break
		}
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		run, _ := e.WaitRun(ctx, id, nil)
		fmt.Println(id, run.RuntimeStatus)
	}
	again, _ := e.RewindRuns(ctx, engine.RewindFilter{GraphName: "classify_ticket", FailedAfter: outageStart})
	fmt.Println(rewound, len(again.Rewound))
	// Output:
	// t1 Completed
	// t2 Completed
	// t3 Completed
	// 3 0
}
