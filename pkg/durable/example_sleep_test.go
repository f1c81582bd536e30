package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Nudge is the state of the sleep example.
type Nudge struct {
	Nudges int `json:"nudges"`
}

// A route returns Sleep to pause the run durably before its next node: no worker waits, the
// run's next work item is delayed. In tests, durabletest's Kit.Advance fires sleeps on a fake
// clock (ExampleKit_Advance_sleep in pkg/durabletest).
func ExampleSleep() {
	b := durable.NewManifestBuilder[Nudge]("nudges")
	b.SetEntrypoint("nudge")
	_ = b.AddStep("nudge", func(_ context.Context, n Nudge) (Nudge, error) {
		n.Nudges++
		return n, nil
	}, durable.WithDecide(func(_ context.Context, n Nudge) (durable.RouteDecision, error) {
		if n.Nudges < 2 {
			return durable.Sleep(10*time.Millisecond, "nudge"), nil // e.g. 24*time.Hour
		}
		return durable.Complete("nudged twice"), nil
	}))
	g, _ := b.Build()

	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: quietLog})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "nudges", InstanceID: "n1", Input: json.RawMessage(`{}`)})
	run, _ := e.WaitRun(ctx, "n1", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	history, _ := e.History(ctx, "n1", "", 100)
	for _, ev := range history.Events {
		if ev.Type == engine.HistorySleepStarted || ev.Type == engine.HistoryRunCompleted {
			fmt.Println(ev.Type, ev.Node)
		}
	}
	fmt.Println(run.RuntimeStatus)
	// Output:
	// sleep_started nudge
	// run_completed nudge
	// Completed
}

// SleepUntil pauses until a point in time; a time in the past continues at once. In a route
// handler's map form the same decision reads {"action": "sleep", "next_node": ..., "until":
// "<RFC 3339>"} (or "delay_ms": <milliseconds> for a Sleep).
func ExampleSleepUntil() {
	d := durable.SleepUntil(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC), "send_newsletter")
	raw, _ := json.Marshal(d)
	fmt.Println(string(raw))
	// Output: {"action":"sleep","next_node":"send_newsletter","event_name":null,"resume_node":null,"note":null,"until":"2030-01-01T09:00:00Z"}
}
