package engine_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #18, liveness: runs survive outages longer than the delivery budget, poison messages
// and workers killed mid-step; storage errors never fail a run as poison.

// dyingGraph is the two-node chain "dying" whose first node kills its worker while die is
// set: it calls runtime.Goexit, so nothing after it runs in that delivery — no commit, no
// error return, no clean-up — as when the process is killed mid-step (deferred calls still
// run; the engine relies on none to count). entered counts the node's starts.
func dyingGraph(t testing.TB, die *atomic.Bool, entered *atomic.Int32) durable.GraphRegistration[counterState] {
	return chainGraph(t, "dying", 2, func(_ context.Context, s counterState) (any, error) {
		if s.N == 0 {
			entered.Add(1)
			if die.Load() {
				runtime.Goexit()
			}
		}
		return durable.Update{"n": s.N + 1}, nil
	})
}

// deliverDying hands one delivery to the engine on a goroutine of its own and reports
// whether the worker died (the handling never returned) and, if not, its error.
func deliverDying(r *rig, body []byte, dequeueCount int64) (died bool, err error) {
	res := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		res <- r.e.HandleWorkItem(context.Background(), body, dequeueCount)
	}()
	<-exited
	select {
	case err := <-res:
		return false, err
	default:
		return true, nil
	}
}

// killStep delivers the first work item of run id n times (dequeue counts 1 to n), the
// worker dying in the node each time; each death's item comes back after its visibility
// timeout, so clk (the rig's clock) moves on by it after each.
func killStep(t testing.TB, r *rig, clk *fakeClock, id string, n int64) {
	t.Helper()
	for count := int64(1); count <= n; count++ {
		if died, err := deliverDying(r, encodeItemAt(id, 1, 0), count); !died {
			t.Fatalf("delivery %d returned (%v) instead of dying in the node", count, err)
		}
		clk.advance(r.e.Options().VisibilityTimeout)
	}
}

const killedFiveTimes = "orchestrator failed: step 1 (node 'n0') was started 5 times without completing: its worker died or timed out each time"

// A step that kills its worker on every delivery fails its run after MaxStepStarts (5)
// starts, with a clear error naming the step and node: the holds the dead starts left past
// their lease count the deaths that the dequeue count alone cannot tell from failures.
func TestEngine_StepKillingItsWorker_FailsRunAtMaxStepStarts(t *testing.T) {
	t.Parallel()
	var die atomic.Bool
	var entered atomic.Int32
	obs := &recordingObserver{}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Observer: obs, Clock: clk.now}, false, dyingGraph(t, &die, &entered))
	id := r.start(t, "dying", "", `{}`)
	die.Store(true)
	killStep(t, r, clk, id, 5)
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 0), 6); err != nil {
		t.Fatal(err)
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != killedFiveTimes {
		t.Fatalf("status %s output %s, want Failed: %s", run.RuntimeStatus, run.Output, killedFiveTimes)
	}
	if n := entered.Load(); n != 5 {
		t.Errorf("the node started %d times, want 5", n)
	}
	h := r.history(t, id)
	if last := h[len(h)-1]; last.Type != engine.HistoryRunFailed || last.Node != "n0" {
		t.Errorf("history ends with %s at %q, want run_failed at n0", last.Type, last.Node)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if last := obs.ended[len(obs.ended)-1]; last.Kind != engine.ObservedFailed || last.Node != "n0" || last.Failure == "" {
		t.Errorf("observer saw %+v last, want a Failed step at n0 with its cause", last)
	}
}

// A worker killed mid-step still counts when its deaths are interleaved with storage
// errors: the deaths add up, the failures do not, and a commit clears the count.
func TestEngine_WorkerKilledMidStep_StillCountedAmongStorageErrors(t *testing.T) {
	t.Parallel()
	var die atomic.Bool
	var entered atomic.Int32
	clk := newFakeClock()
	r := newRig(t, engine.Options{MaxStepStarts: 3, Clock: clk.now}, false, dyingGraph(t, &die, &entered))
	id := r.start(t, "dying", "", `{}`)
	item := encodeItemAt(id, 1, 0)
	die.Store(true)
	count := int64(0)
	deliver := func(wantDeath bool) {
		t.Helper()
		count++
		died, err := deliverDying(r, item, count)
		if died != wantDeath || (!died && err == nil) {
			t.Fatalf("delivery %d: died %v, err %v; want died %v", count, died, err, wantDeath)
		}
		clk.advance(r.e.Options().VisibilityTimeout) // a dead worker's item comes back after it
	}
	deliver(true) // start 1 (a first delivery holds nothing)
	r.outage.Begin()
	deliver(false) // storage down: the head cannot be read
	r.outage.End()
	deliver(true) // start 2 takes a hold
	r.outage.Affects = func(op string) bool { return op == enginetest.OpStoreSubmit }
	r.outage.Begin()
	deliver(false) // the hold cannot be written (and start 2's death not counted) before user code
	r.outage.End()
	deliver(true) // start 3 counts start 2's death and takes a hold
	// The next delivery counts start 3's death: the limit is reached.
	if err := r.e.HandleWorkItem(t.Context(), item, count+1); err != nil {
		t.Fatal(err)
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "was started 3 times") {
		t.Fatalf("status %s output %s, want Failed after 3 starts", run.RuntimeStatus, run.Output)
	}
	if n := entered.Load(); n != 3 {
		t.Errorf("the node started %d times, want 3", n)
	}
}

// Storage errors never count towards poison, wherever they strike: reading the head, writing
// the hold, or committing after the node ran (the hold is then released). With
// MaxStepStarts 2, forty failed deliveries later the run still completes.
func TestEngine_StorageErrors_NeverCountTowardsPoison(t *testing.T) {
	t.Parallel()
	var entered atomic.Int32
	var die atomic.Bool
	r := newRig(t, engine.Options{MaxStepStarts: 2}, false, dyingGraph(t, &die, &entered))
	var commitFails atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitFails.Load() && commitsNode(ops, "n0") {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "dying", "", `{}`)
	item := encodeItemAt(id, 1, 0)
	for count := int64(1); count <= 40; count++ {
		switch count % 4 {
		case 0: // everything down
			r.outage.Affects = nil
			r.outage.Begin()
		case 1: // the restart record (any Submit) fails
			r.outage.Affects = func(op string) bool { return op == enginetest.OpStoreSubmit }
			r.outage.Begin()
		case 2: // the node runs, then its commit fails
			commitFails.Store(true)
		case 3: // reads fail
			r.outage.Affects = func(op string) bool { return op == enginetest.OpStoreGet }
			r.outage.Begin()
		}
		if err := r.e.HandleWorkItem(t.Context(), item, count); err == nil {
			t.Fatalf("delivery %d succeeded despite the fault", count)
		}
		r.outage.End()
		commitFails.Store(false)
	}
	if err := r.e.HandleWorkItem(t.Context(), item, 41); err != nil {
		t.Fatal(err)
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s: storage errors were counted as poison", run.RuntimeStatus, run.Output)
	}
	if n := entered.Load(); n < 11 {
		t.Errorf("the node ran %d times; the faults after it did not strike", n)
	}
}
