package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Quote is the state of a graph whose one node calls a service that is sometimes down.
type Quote struct {
	Symbol   string `json:"symbol" durable:"required"`
	Price    int    `json:"price"`
	Attempts int    `json:"attempts"`
}

var errUnavailable = errors.New("quote service unavailable")

// quoteGraph fetches a price from a service that fails its first down calls.
func quoteGraph(down int32) durable.GraphRegistration[Quote] {
	var failures atomic.Int32
	fetch := func(ctx context.Context, q Quote) (Quote, error) {
		if failures.Add(1) <= down {
			return q, fmt.Errorf("fetch %s: %w", q.Symbol, errUnavailable)
		}
		info, _ := durable.StepInfoFrom(ctx)
		q.Price, q.Attempts = 42, info.Attempt
		return q, nil
	}
	b := durable.NewManifestBuilder[Quote]("quotes")
	b.SetEntrypoint("fetch")
	_ = b.AddStep("fetch", fetch, durable.WithHandlerName("quotes.fetch"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// quotePolicy retries a failing node up to three times: after 10 ms, 20 ms, then 40 ms.
var quotePolicy = engine.GraphPolicy{Retry: engine.RetryPolicy{
	MaxAttempts:    4,                     // the first attempt and up to three retries
	InitialBackoff: 10 * time.Millisecond, // before the second attempt (default 1 s)
	Multiplier:     2,                     // each back-off doubles (the default)
	MaxBackoff:     time.Second,           // and never exceeds this (default 5 min)
}}

// A retry policy is the engine's, per graph name (engine.Options.Policies; in an app,
// launch.Spec.DurableOptions.Engine.Policies). A node handler that returns an error runs
// again after the back-off, in the same step: the history records each retry and the step
// commits once, when an attempt succeeds. After MaxAttempts failed attempts the run fails.
func Example_retry() {
	reg := durable.NewRegistry()
	_ = reg.Register(quoteGraph(2)) // the service is down for two calls
	e, err := engine.New(engine.Options{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Policies: map[string]engine.GraphPolicy{"quotes": quotePolicy},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "quotes", InstanceID: "q1",
		Input: json.RawMessage(`{"symbol":"FGR"}`)})
	run, _ := e.WaitRun(ctx, "q1", nil)
	q, _ := engine.DecodeState[Quote](run)
	fmt.Println(run.RuntimeStatus, q.Price, "on attempt", q.Attempts)
	// Output: Completed 42 on attempt 3
}

// TestExample_retry_HistoryAndExhaustion checks what the example says: each failed attempt
// leaves a node_retry_scheduled row and the step commits once; a node that fails every one of
// MaxAttempts attempts fails its run with the handler's error.
func TestExample_retry_HistoryAndExhaustion(t *testing.T) {
	opts := durabletest.Options{Policy: quotePolicy, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	kit := durabletest.New(t, quoteGraph(2), opts)
	kit.Start("q1", Quote{Symbol: "FGR"})
	kit.Advance(time.Second)
	if got := kit.Final("q1"); got.Price != 42 || got.Attempts != 3 {
		t.Fatalf("final %+v, want price 42 on attempt 3", got)
	}
	var kinds []string
	for _, ev := range kit.History("q1") {
		kinds = append(kinds, ev.Type)
	}
	if want := "run_started node_retry_scheduled node_retry_scheduled node_completed route_resolved run_completed"; strings.Join(kinds, " ") != want {
		t.Errorf("history %v, want %s", kinds, want)
	}

	kit = durabletest.New(t, quoteGraph(4), opts)
	kit.Start("q2", Quote{Symbol: "FGR"})
	kit.Advance(time.Minute)
	run := kit.Run("q2")
	if msg := run.FailureMessage(); run.RuntimeStatus != engine.StatusFailed || !strings.Contains(msg, errUnavailable.Error()) {
		t.Fatalf("after 4 failed attempts: %s %q, want Failed naming %q", run.RuntimeStatus, msg, errUnavailable)
	}
}
