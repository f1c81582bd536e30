package engine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// RunState reads a live run's state and where it stands: here a support ticket classified
// and waiting for its approval.
func ExampleEngine_RunState() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		panic(err)
	}
	defer e.Close()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: "ticket-7",
		Input: json.RawMessage(`{"user_message":"I want a refund"}`)})
	_, _ = e.WaitRun(ctx, run.InstanceID, engine.RunSettled)
	st, _ := e.RunState(ctx, run.InstanceID)
	var state struct {
		NeedsHuman bool     `json:"needs_human"`
		Tags       []string `json:"tags"`
	}
	_ = json.Unmarshal(st.State, &state)
	fmt.Println(st.RuntimeStatus, st.At.WaitingFor, state.NeedsHuman, state.Tags)
	// Output: Running [approval] true [refund]
}

// Runs are found by a search key: one the graph declares (durable.ManifestBuilder.SearchKeys)
// or, as here, one given at the start.
func ExampleEngine_ListRuns_searchKeys() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	for i, customer := range []string{"acme", "globex", "acme"} {
		_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: fmt.Sprintf("ticket-%d", i),
			Input: json.RawMessage(`{"user_message":"I want a refund"}`), SearchKeys: map[string]string{"customer": customer}})
	}
	page, _ := e.ListRuns(ctx, engine.RunQuery{Keys: map[string]string{"customer": "acme"}})
	for _, r := range page.Runs {
		fmt.Println(r.InstanceID, r.SearchKeys["customer"])
	}
	// Unordered output:
	// ticket-2 acme
	// ticket-0 acme
}
