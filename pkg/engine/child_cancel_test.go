package engine_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// The cancel of a family goes on in the background, from storage (cancel_family.go).

// startChain starts id of "fam", a chain of depth children below it, the deepest holding
// (waiting for "go"), runs it until it waits, and returns its runs, the root first.
func startChain(t *testing.T, r *rig, id string, depth int) []string {
	t.Helper()
	startFam(t, r, "fam", id, famState{Kids: 1, Levels: depth, Hold: true})
	r.drive(t)
	runs := []string{id}
	for range depth {
		runs = append(runs, kidOf(t, r, runs[len(runs)-1]))
	}
	for _, rid := range runs {
		assertStatus(t, r, rid, engine.StatusRunning)
	}
	return runs
}

// assertChainCancelled checks every run of the chain runs is terminated, each child naming its
// parent and the root's reason.
func assertChainCancelled(t *testing.T, r *rig, runs []string, reason string) {
	t.Helper()
	for i, rid := range runs {
		want := reason
		if i > 0 {
			want = "parent run '" + runs[i-1] + "' was cancelled: " + reason
		}
		if got := outputString(t, assertStatus(t, r, rid, engine.StatusTerminated)); got != want {
			t.Fatalf("run %s: reason %q, want %q", rid, got, want)
		}
	}
}

// storageCalls is every storage call the rig's engine made so far.
func storageCalls(r *rig) int64 { return r.counts.Table() + r.counts.Queue() + r.counts.Payload() }

// A cancel answers after a number of storage calls that does not grow with its family's depth:
// the chain below is cancelled by one work item, which walks it one intent at a time, and no
// timer or repair pass is needed for it.
func TestEngine_ChildRun_CancelOfADeepFamily_AnswersInCallsIndependentOfItsDepth(t *testing.T) {
	t.Parallel()
	calls := map[int]int64{}
	for _, depth := range []int{1, engine.DefaultMaxChildDepth} {
		r, _ := newFamilyRig(t, engine.Options{})
		runs := startChain(t, r, "deep", depth)
		before := storageCalls(r)
		if err := r.e.CancelRun(t.Context(), runs[0], "stop"); err != nil {
			t.Fatal(err)
		}
		calls[depth] = storageCalls(r) - before
		assertStatus(t, r, runs[0], engine.StatusTerminated)
		if steps := r.drive(t); steps != 1 {
			t.Errorf("depth %d: %d work items handled after the cancel, want one", depth, steps)
		}
		assertChainCancelled(t, r, runs, "stop")
		if n := dueRows(t, r); n != 0 {
			t.Fatalf("depth %d: %d due rows left once the family is cancelled", depth, n)
		}
	}
	t.Logf("storage calls of the cancel: %v", calls)
	if deep, shallow := calls[engine.DefaultMaxChildDepth], calls[1]; deep != shallow || deep > 16 {
		t.Fatalf("the cancel made %d storage calls over a family %d deep, %d over one 1 deep; want the same, and few",
			deep, engine.DefaultMaxChildDepth, shallow)
	}
}

// isCancelItem reports whether a queue message is the work item of a cancel's intent.
func isCancelItem(body []byte) bool { return strings.Contains(string(body), `"cx":`) }

// The background steps of a family's cancel lost — every one of their work items dropped, or
// the process gone after the answer — the repair pass finishes the family from the intents in
// storage, and the parent of the run cancelled hears of it once the chain below is cancelled.
func TestEngine_ChildRun_CancelOfAFamily_StepsLost_TheRepairPassFinishesIt(t *testing.T) {
	t.Parallel()
	t.Run("every step's work item dropped", func(t *testing.T) {
		t.Parallel()
		r, clk := newFamilyRig(t, engine.Options{})
		runs := startChain(t, r, "lost", 4)
		r.fqueue.OnEnqueue = func(body []byte) (int, error) {
			if isCancelItem(body) {
				return 0, nil
			}
			return 1, nil
		}
		if err := r.e.CancelRun(t.Context(), runs[1], "enough"); err != nil { // a child, whose parent takes its failure
			t.Fatal(err)
		}
		r.drive(t)
		assertStatus(t, r, runs[2], engine.StatusRunning) // nothing carried the chain on
		for range len(runs) {                             // a pass takes one step; the next intent is due later
			sweepLater(t, r, clk)
		}
		assertChainCancelled(t, r, runs[1:], "enough")
		// The root heard of its child's end: it failed naming it.
		if msg := outputString(t, assertStatus(t, r, runs[0], engine.StatusFailed)); !strings.Contains(msg, "child run '"+runs[1]+"' of graph 'fam' was terminated: enough") {
			t.Fatalf("root failure %q", msg)
		}
		if n := dueRows(t, r); n != 0 {
			t.Fatalf("%d due rows left", n)
		}
	})
	t.Run("a step below the first fails", func(t *testing.T) {
		t.Parallel()
		r, _ := newFamilyRig(t, engine.Options{})
		runs := startChain(t, r, "below", 4)
		var failed atomic.Bool
		r.fstore.BeforeSubmit = func(ops []engine.Op) error {
			if insertsHistory(engine.HistoryRunTerminated)(ops) && ops[0].Entity.PartitionKey == runs[3] && failed.CompareAndSwap(false, true) {
				return enginetest.ErrInjected
			}
			return nil
		}
		if err := r.e.CancelRun(t.Context(), runs[0], "stop"); err != nil {
			t.Fatal(err)
		}
		r.drive(t) // no timer, no repair pass: the failed step's own work item takes it up
		if !failed.Load() {
			t.Fatal("the fault never fired")
		}
		assertChainCancelled(t, r, runs, "stop")
		if n := dueRows(t, r); n != 0 {
			t.Fatalf("%d due rows left", n)
		}
	})
	t.Run("the process gone after the answer", func(t *testing.T) {
		t.Parallel()
		r, clk := newFamilyRig(t, engine.Options{})
		runs := startChain(t, r, "gone", engine.DefaultMaxChildDepth)
		if err := r.e.CancelRun(t.Context(), runs[0], "stop"); err != nil {
			t.Fatal(err)
		}
		// The process dies: its queue's messages are lost with it (a queue in its memory).
		for {
			msgs, err := r.queue.Receive(t.Context(), engine.MaxReceive, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				if err := r.queue.Delete(t.Context(), m); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Another engine over the same store.
		e2, err := engine.New(engine.Options{Registry: r.reg, Store: r.store, Queue: r.queue, Payloads: r.payloads, Clock: clk.now, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e2.Close() })
		r.e = e2
		sweepLater(t, r, clk)
		assertChainCancelled(t, r, runs, "stop")
		if n := dueRows(t, r); n != 0 {
			t.Fatalf("%d due rows left", n)
		}
	})
}

// A purge of a root whose family is still being cancelled purges the whole family; the
// intents left behind are settled by the repair pass without a trace.
func TestEngine_ChildRun_PurgeOfARootWhoseFamilyIsBeingCancelled_PurgesItAll(t *testing.T) {
	t.Parallel()
	r, clk := newFamilyRig(t, engine.Options{})
	runs := startChain(t, r, "purged", 4)
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		if isCancelItem(body) {
			return 0, nil // the family's cancel has not gone on yet
		}
		return 1, nil
	}
	if err := r.e.CancelRun(t.Context(), runs[0], "stop"); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), runs[0]); err != nil {
		t.Fatal(err)
	}
	sweepLater(t, r, clk)
	for _, rid := range runs {
		if _, err := r.e.GetRun(t.Context(), rid); err == nil {
			t.Fatalf("run %s after the purge", rid)
		}
		enginetest.CheckNoOrphanRows(t, r.store, r.e, rid)
	}
	if n := dueRows(t, r); n != 0 {
		t.Fatalf("%d due rows left", n)
	}
}

// A cancel whose batch does not land leaves no intent behind, and its family runs on.
func TestEngine_ChildRun_CancelThatFails_LeavesNoIntent(t *testing.T) {
	t.Parallel()
	r, clk := newFamilyRig(t, engine.Options{})
	runs := startChain(t, r, "failed", 2)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunTerminated)(ops) {
			return enginetest.ErrInjected
		}
		return nil
	}
	if err := r.e.CancelRun(t.Context(), runs[0], "stop"); err == nil {
		t.Fatal("a cancel whose batch failed succeeded")
	}
	r.fstore.BeforeSubmit = nil
	if n := dueRows(t, r); n != 0 {
		t.Fatalf("%d due rows left by a cancel that did not land", n)
	}
	sweepLater(t, r, clk)
	for _, rid := range runs {
		assertStatus(t, r, rid, engine.StatusRunning)
	}
}

// With the budget full, the cancel of a family and every one of its background steps have
// room: the whole family ends terminated.
func TestEngine_Budget_Full_CancelOfADeepFamilyReachesEveryRun(t *testing.T) {
	t.Parallel()
	r := newBudgetFamilyRig(t, membudget.Limits{Total: 1 << 20}, engine.Retention{}, engine.Options{})
	if err := r.startOwned("eve", "fam", "eve-deep", `{"kids":1,"levels":8,"hold":true}`); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	r.fillFor(t, "eve")
	if err := r.startOwned("eve", "support_agent", "eve-more", `{"user_message":"refund `+strings.Repeat("y", 4<<10)+`"}`); !errors.Is(err, engine.ErrStorageFull) {
		t.Fatalf("a start with the budget full: %v, want it refused", err)
	}
	for _, n := range []int64{64 << 10, 4 << 10, 512, 64, 8, 1} { // the last bytes of the total
		for r.b.Grow(t.Context(), "", n) == nil {
		}
	}
	reason := strings.Repeat("stop ", 1<<10) // 5 KiB
	if err := r.e.CancelRun(t.Context(), "eve-deep", reason); err != nil {
		t.Fatalf("cancel with the budget full: %v", err)
	}
	r.drive(t)
	id := "eve-deep"
	for depth := 0; ; depth++ {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.RuntimeStatus != engine.StatusTerminated || !strings.Contains(string(run.Output), "stop stop") {
			t.Fatalf("run %s, %d below the root, is %s with output %.80s… with the budget full; want terminated", id, depth, run.RuntimeStatus, run.Output)
		}
		if len(run.ChildInstanceIDs) == 0 {
			if depth != 8 {
				t.Fatalf("the chain ends %d below the root, want 8", depth)
			}
			break
		}
		id = run.ChildInstanceIDs[0]
	}
}
