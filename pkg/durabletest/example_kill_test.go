package durabletest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// The graphs and the ledger of these examples are in kill_test.go, whose tests check the
// same claims: orderGraph is charge → ship; batchGraph fans enrich out over its items; a
// ledger records each handler call with its idempotency key (durable.StepInfoFrom(ctx)
// .IdempotencyKey()), as your test chooses to count your handlers' side effects.

// CrashAfterHandler kills the worker after charge's handler returned, before its commit: the
// handler runs again, with the same idempotency key, and the step commits once.
func ExampleKit_CrashAfterHandler() {
	var t *testing.T // your test's t
	var charges ledger
	kit := durabletest.New(t, orderGraph(t, &charges), durabletest.Options{})
	kit.CrashAfterHandler("charge", 1)

	kit.Start("o1", Order{ID: "o1"}) // the dead worker's item comes back after its visibility timeout
	keys := charges.calls("charge")
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("charge ran with keys %q, want twice with one key", keys)
	}
	commits := 0
	for _, ev := range kit.History("o1") {
		if ev.Type == durabletest.HistoryNodeCompleted && ev.Node == "charge" {
			commits++
		}
	}
	if commits != 1 {
		t.Fatalf("charge committed %d times", commits)
	}
}

// DuplicateDelivery has the queue hand out charge's work item twice: the copy, arriving after
// the first was handled, finds the run moved on and commits nothing.
func ExampleKit_DuplicateDelivery() {
	var t *testing.T // your test's t
	var charges ledger
	kit := durabletest.New(t, orderGraph(t, &charges), durabletest.Options{})
	kit.DuplicateDelivery("charge", 1)

	if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	if keys := charges.calls("charge"); len(keys) != 1 {
		t.Fatalf("charge ran %d times, want once: the copy found the step committed", len(keys))
	}
}

// ConcurrentDelivery delivers charge's item to a second worker while the first is between
// the handler's return and its commit: both handlers run with one idempotency key, and one
// commit lands.
func ExampleKit_ConcurrentDelivery() {
	var t *testing.T // your test's t
	var charges ledger
	kit := durabletest.New(t, orderGraph(t, &charges), durabletest.Options{})
	kit.ConcurrentDelivery("charge", 1)

	kit.Start("o1", Order{ID: "o1"})
	if keys := charges.calls("charge"); len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("charge ran with keys %q, want twice with one key: dedupe on it", keys)
	}
	if visits := kit.Visits("o1"); len(visits) != 2 { // charge, ship: one commit each
		t.Fatalf("visits %q", visits)
	}
}

// LoseReply applies the commit of charge's step and loses its reply: the engine reads back
// that the write is its own and goes on, without running charge again.
func ExampleKit_LoseReply() {
	var t *testing.T // your test's t
	var charges ledger
	kit := durabletest.New(t, orderGraph(t, &charges), durabletest.Options{})
	kit.LoseReply("charge", 1)

	if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s: the unknown outcome stalled the run", run.RuntimeStatus)
	}
	if keys := charges.calls("charge"); len(keys) != 1 {
		t.Fatalf("charge ran %d times", len(keys))
	}
}

// Restart, called from a handler, restarts the engine mid-fan-out: the branch it runs under
// does not commit, the items the worker held come back to the new engine, and every branch
// commits once.
func ExampleKit_Restart() {
	var t *testing.T // your test's t
	var calls ledger
	var kit *durabletest.Kit[Batch]
	restarted := false
	kit = durabletest.New(t, batchGraph(t, &calls, func(item string) {
		if item == "c" && !restarted { // a and b have committed, d is received
			restarted = true
			kit.Restart()
		}
	}), durabletest.Options{})

	kit.Start("b1", Batch{Items: []string{"a", "b", "c", "d"}})
	if got := kit.Final("b1").Enriched; len(got) != 4 {
		t.Fatalf("joined %q, want each item once", got)
	}
	if keys := calls.calls("enrich:c"); len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("c ran with keys %q", keys)
	}
}
