package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// quietLog discards the examples' engine logs.
var quietLog = slog.New(slog.DiscardHandler)

// Payment is the state of the examples of per-node policies.
type Payment struct {
	Card     string `json:"card"`
	Charged  bool   `json:"charged"`
	Attempts int    `json:"attempts"`
	Outcome  string `json:"outcome"`
}

// runPayment builds "payments" from add (which adds its nodes; the entrypoint is "charge"),
// runs it once on an embedded engine under policy, and returns the finished run.
func runPayment(policy engine.GraphPolicy, add func(b *durable.ManifestBuilder[Payment])) engine.Run {
	b := durable.NewManifestBuilder[Payment]("payments")
	b.SetEntrypoint("charge")
	add(b)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Policies: map[string]engine.GraphPolicy{"payments": policy}, Logger: quietLog})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "payments", InstanceID: "p1", Input: json.RawMessage(`{"card":"4242"}`)})
	run, _ := e.WaitRun(ctx, "p1", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	return run
}

// outcome is a terminal node that records how it was reached.
func outcome(ctx context.Context, p Payment) (Payment, error) {
	info, _ := durable.StepInfoFrom(ctx)
	p.Outcome = "charged"
	if f := info.Failure; f != nil {
		p.Outcome = f.Node + " failed: " + f.Error
	}
	return p, nil
}

// A node's own retry policy replaces the graph's (engine.GraphPolicy.Retry) for that node:
// here the graph has none, and charge is tried up to three times.
func ExampleWithRetry() {
	var calls atomic.Int32
	charge := func(ctx context.Context, p Payment) (Payment, error) {
		if calls.Add(1) < 3 {
			return p, errors.New("gateway timeout")
		}
		info, _ := durable.StepInfoFrom(ctx)
		p.Charged, p.Attempts = true, info.Attempt
		return p, nil
	}
	run := runPayment(engine.GraphPolicy{}, func(b *durable.ManifestBuilder[Payment]) {
		_ = b.AddStep("charge", charge, durable.Terminal(),
			durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}))
	})
	p, _ := engine.DecodeState[Payment](run)
	fmt.Println(run.RuntimeStatus, "on attempt", p.Attempts)
	// Output: Completed on attempt 3
}

// An error wrapped in NonRetryable is never retried, whatever the policy: retrying a declined
// card would not help.
func ExampleNonRetryable() {
	var calls atomic.Int32
	charge := func(_ context.Context, p Payment) (Payment, error) {
		calls.Add(1)
		return p, durable.NonRetryable(fmt.Errorf("card %s declined", p.Card))
	}
	run := runPayment(engine.GraphPolicy{Retry: engine.RetryPolicy{MaxAttempts: 5}}, func(b *durable.ManifestBuilder[Payment]) {
		_ = b.AddStep("charge", charge, durable.Terminal())
	})
	fmt.Println(run.RuntimeStatus, run.FailureMessage(), "after", calls.Load(), "call")
	// Output: Failed execute_node failed: card 4242 declined after 1 call
}

// A failure route sends the run to another node instead of failing it; that node sees the
// failure in its StepInfo.
func ExampleWithFailureRoute() {
	charge := func(_ context.Context, p Payment) (Payment, error) {
		return p, durable.NonRetryable(errors.New("card declined"))
	}
	run := runPayment(engine.GraphPolicy{}, func(b *durable.ManifestBuilder[Payment]) {
		_ = b.AddStep("charge", charge, durable.WithNext("receipt"), durable.WithFailureRoute("apologise"))
		_ = b.AddStep("receipt", outcome, durable.Terminal())
		_ = b.AddStep("apologise", outcome, durable.Terminal())
	})
	p, _ := engine.DecodeState[Payment](run)
	fmt.Println(run.RuntimeStatus, p.Outcome)
	// Output: Completed charge failed: card declined
}

// A timeout bounds each attempt of a node: the handler's context gets the deadline, and an
// attempt still running at it fails (and is retried under a retry policy).
func ExampleWithTimeout() {
	charge := func(ctx context.Context, p Payment) (Payment, error) {
		select { // a gateway that never answers
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(time.Hour):
			return p, nil
		}
	}
	run := runPayment(engine.GraphPolicy{}, func(b *durable.ManifestBuilder[Payment]) {
		_ = b.AddStep("charge", charge, durable.WithTimeout(10*time.Millisecond), durable.WithNext("receipt"),
			durable.WithFailureRoute("apologise"))
		_ = b.AddStep("receipt", outcome, durable.Terminal())
		_ = b.AddStep("apologise", outcome, durable.Terminal())
	})
	p, _ := engine.DecodeState[Payment](run)
	fmt.Println(p.Outcome)
	// Output: charge failed: node 'charge' timed out after 10ms: context deadline exceeded
}

// A handler given no name is named after its node, so the hash does not depend on the Go
// functions: renaming one, or building under `go test`, keeps the version.
func Example_defaultNames() {
	b := durable.NewManifestBuilder[Payment]("payments")
	b.SetEntrypoint("charge")
	_ = b.AddStep("charge", outcome, durable.WithDecide(func(context.Context, Payment) (durable.RouteDecision, error) {
		return durable.Next("receipt"), nil
	}))
	_ = b.AddStep("receipt", outcome, durable.Terminal())
	g, _ := b.Build()
	m := g.Manifest()
	for _, n := range m.Nodes {
		fmt.Printf("%s: %q %q\n", n.Name, n.HandlerName, n.RouteHandlerName)
	}
	fmt.Println(m.GraphHash)
	// Output:
	// charge: "node:charge" "route:charge"
	// receipt: "node:receipt" ""
	// a01dab05966f1e45
}
