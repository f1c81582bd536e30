package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A client follows a run through its feed: each answer holds the items after the position it
// asked for, and waits, up to Wait, for the run to move when there are none.
func ExampleEngine_Feed() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: "ticket-9",
		Input: json.RawMessage(`{"user_message":"I want a refund"}`)})
	_, _ = e.WaitRun(ctx, run.InstanceID, engine.RunSettled) // it waits for its approval
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = e.RaiseEvent(ctx, run.InstanceID, "approval", json.RawMessage(`{"approved":true,"reviewer":"ann"}`))
	}()
	var after int64
	var feedRun string // the run after is a position in: a new start of the id is another run
	for {
		page, err := e.Feed(ctx, run.InstanceID, engine.FeedQuery{After: after, Run: feedRun, Wait: 20 * time.Second})
		if err != nil {
			panic(err)
		}
		for _, it := range page.Items {
			fmt.Println(it.Sequence, it.Type, it.Node)
		}
		after, feedRun = page.NextAfter, page.Run
		if page.End {
			break
		}
	}
	// Output:
	// 1 run_started classify_request
	// 2 node_completed classify_request
	// 3 route_resolved classify_request
	// 4 wait_started classify_request
	// 5 event_received classify_request
	// 6 event_applied draft_reply
	// 7 node_completed draft_reply
	// 8 route_resolved draft_reply
	// 9 node_completed finalize_reply
	// 10 route_resolved finalize_reply
	// 11 run_completed finalize_reply
}
