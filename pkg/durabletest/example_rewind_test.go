package durabletest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// Triage is the state of triageGraph.
type Triage struct {
	Text     string `json:"text"`
	Label    string `json:"label"`
	Answered bool   `json:"answered"`
}

// triageGraph builds "triage": intake → classify (the model call) → answer. calls counts the
// real handlers' calls per node.
func triageGraph(calls map[string]int) durable.GraphRegistration[Triage] {
	b := durable.NewManifestBuilder[Triage]("triage")
	b.SetEntrypoint("intake")
	count := func(node string, update durable.Update) durable.NodeFunc[Triage] {
		return func(context.Context, Triage) (any, error) {
			calls[node]++
			return update, nil
		}
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(b.AddNode("intake", count("intake", nil), durable.WithNext("classify")))
	must(b.AddNode("classify", count("classify", durable.Update{"label": "refund"}), durable.WithNext("answer"),
		durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second})))
	must(b.AddNode("answer", count("answer", durable.Update{"answered": true}), durable.Terminal()))
	g, err := b.Build()
	must(err)
	return g
}

// Rewind continues a run that failed from the step that failed: here a model outage made
// classify spend its 3 attempts (Faults stands for the outage), the run failed, and the
// rewind completes it without running intake again.
func ExampleKit_Rewind() {
	var t *testing.T // your test's t
	calls := map[string]int{}
	kit := durabletest.New(t, triageGraph(calls), durabletest.Options{Faults: map[string]int{"classify": 3}})

	kit.Start("t1", Triage{Text: "where is my refund?"})
	kit.Advance(time.Minute) // classify's back-offs: its 3 attempts fail
	if got := kit.Run("t1").RuntimeStatus; got != durabletest.StatusFailed {
		t.Fatalf("status %s", got)
	}
	run := kit.Rewind("t1") // the outage is over: classify runs again, from attempt 1
	if run.RuntimeStatus != durabletest.StatusCompleted || kit.Final("t1").Label != "refund" {
		t.Fatalf("after the rewind: %s", run.RuntimeStatus)
	}
	if calls["intake"] != 1 || calls["classify"] != 1 || calls["answer"] != 1 {
		t.Fatalf("handler calls %v: a committed step ran again", calls)
	}
}

// TestKit_Rewind runs the body of ExampleKit_Rewind with a real t, and checks the refusals and
// the history's record of the rewind.
func TestKit_Rewind(t *testing.T) {
	calls := map[string]int{}
	kit := durabletest.New(t, triageGraph(calls), durabletest.Options{Faults: map[string]int{"classify": 3}})
	kit.Start("t1", Triage{Text: "where is my refund?"})
	kit.Advance(time.Minute)
	if got := kit.Run("t1").RuntimeStatus; got != durabletest.StatusFailed {
		t.Fatalf("status %s, want Failed", got)
	}
	if _, err := kit.TryRewind("nope", ""); !errors.Is(err, durabletest.ErrRunNotFound) {
		t.Fatalf("rewind of an unknown run: %v", err)
	}
	if run := kit.Rewind("t1"); run.RuntimeStatus != durabletest.StatusCompleted || kit.Final("t1").Label != "refund" {
		t.Fatalf("after the rewind: %s %s", run.RuntimeStatus, run.Output)
	}
	if calls["intake"] != 1 || calls["classify"] != 1 || calls["answer"] != 1 {
		t.Fatalf("handler calls %v: a committed step ran again", calls)
	}
	var nf *durabletest.RunNotFailedError
	if _, err := kit.TryRewind("t1", "again"); !errors.As(err, &nf) || nf.Status != durabletest.StatusCompleted {
		t.Fatalf("rewind of a completed run: %v", err)
	}
	var types []string
	for _, h := range kit.History("t1") {
		types = append(types, h.Type)
	}
	want := []string{"run_started", "node_completed", "route_resolved", "node_retry_scheduled", "node_retry_scheduled", "run_failed",
		"run_rewound", "node_completed", "route_resolved", "node_completed", "route_resolved", "run_completed"}
	if len(types) != len(want) {
		t.Fatalf("history %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("history %v, want %v", types, want)
		}
	}
	// A Kit drives the rewound run past its timers too: Advance after the rewind finds nothing.
	kit.Advance(time.Hour)
	if got := kit.Run("t1").RuntimeStatus; got != durabletest.StatusCompleted {
		t.Fatalf("status after Advance %s", got)
	}
}
