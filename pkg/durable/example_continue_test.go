package durable_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Watch is the state of the continue-as-new example: the turns of one generation, and what
// the ones before it left.
type Watch struct {
	Turns   int    `json:"turns"`
	Summary string `json:"summary"`
	Rounds  int    `json:"rounds"`
}

// A route returns ContinueAsNew to end the run's current history and go on as the same run
// from the entrypoint, with a new input: a loop that would otherwise pass MaxSteps, or grow
// one history for ever (an agent that wakes every day for months), keeps what it needs in the
// input and starts again. Here each generation takes three turns; the run continues as new
// twice, then completes.
func ExampleContinueAsNew() {
	b := durable.NewManifestBuilder[Watch]("watch")
	b.SetEntrypoint("turn")
	_ = b.AddStep("turn", func(_ context.Context, w Watch) (Watch, error) {
		w.Turns++
		return w, nil
	}, durable.WithDecide(func(_ context.Context, w Watch) (durable.RouteDecision, error) {
		switch {
		case w.Turns < 3:
			return durable.Next("turn"), nil // in a real agent: durable.Sleep(24*time.Hour, "turn")
		case w.Rounds < 2:
			summary := fmt.Sprintf("%s%d turns;", w.Summary, w.Turns)
			return durable.ContinueAsNew(Watch{Summary: summary, Rounds: w.Rounds + 1}), nil
		}
		return durable.Complete("watched"), nil
	}))
	g, _ := b.Build()

	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: quietLog})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "watch", InstanceID: "w1", Input: json.RawMessage(`{}`)})
	run, _ := e.WaitRun(ctx, "w1", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	fmt.Println(run.RuntimeStatus, "in generation", run.Generation)

	current, _ := e.History(ctx, "w1", "", 100) // the current generation's rows
	fmt.Println(current.Events[0].Type, string(current.Events[0].Data))
	before, _ := e.GenerationHistory(ctx, "w1", 1, "", 100) // the one before
	fmt.Println(len(before.Events), "rows in generation 1, the last:", string(before.Events[len(before.Events)-1].Data))
	// Output:
	// Completed in generation 2
	// continued_as_new {"generation":2,"initial_state":{"turns":0,"summary":"3 turns;3 turns;","rounds":2}}
	// 7 rows in generation 1, the last: {"action":"continue_as_new","next_node":null,"event_name":null,"resume_node":null,"note":null}
}
