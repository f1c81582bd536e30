package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// The guards of a branch's work item, each shown by what goes wrong without it.

// countingFan is the fan graph whose branch handler counts its calls per item, emits
// "seen" and fails (a handler error) while fail says so.
func countingFan(t *testing.T, calls *[8]atomic.Int32, fail func(item int) bool) durable.GraphRegistration[fanState] {
	return fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		item, err := durable.BranchItem[int](ctx)
		if err != nil {
			return nil, err
		}
		calls[item%8].Add(1)
		if err := durable.Emit(ctx, "seen", item); err != nil {
			return nil, err
		}
		if fail != nil && fail(item) {
			return nil, errors.New("branch says no")
		}
		return fanWork(ctx, s)
	})
}

// A redelivered branch item whose branch committed before its worker died does not run
// the handler again: it only enqueues the join.
func TestEngine_FanOut_RedeliveredCommittedBranch_DoesNotRunAgain(t *testing.T) {
	t.Parallel()
	var calls [8]atomic.Int32
	r := newRig(t, engine.Options{}, false, countingFan(t, &calls, nil))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 0)
	if err := r.e.HandleWorkItem(t.Context(), body, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.e.HandleWorkItem(t.Context(), body, 2); err != nil { // its delete was lost
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 2)
	if n := calls[0].Load(); n != 1 {
		t.Fatalf("branch 0 ran %d times", n)
	}
}

// A branch whose handler keeps failing runs exactly MaxAttempts times, then fails.
func TestEngine_FanOut_BranchRunsMaxAttemptsTimes(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var calls [8]atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}},
	}}, false, countingFan(t, &calls, func(item int) bool { return item == 1 }))
	id := r.start(t, "fan", "", fanInput(2))
	for range 4 {
		r.drive(t)
		clk.advance(time.Minute)
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if n := calls[1].Load(); n != 2 || run.RuntimeStatus != engine.StatusFailed {
		t.Fatalf("branch 1 ran %d times (want 2); run %s", n, run.RuntimeStatus)
	}
}

// A branch item of a purged run, delivered after a new run of the same id fanned out at the
// same step, is dropped: it must not commit the old run's item into the new run's region.
func TestEngine_FanOut_StaleBranchOfAPurgedRun_Dropped(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	id := r.start(t, "fan", "same", `{"items":[5,6]}`)
	stale := takeBranchMessage(t, r, 0)
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	r.start(t, "fan", "same", fanInput(2)) // items 0 and 1, at generation 1 again
	fresh := takeBranchMessage(t, r, 0)    // the new run has fanned out
	if err := r.e.HandleWorkItem(t.Context(), stale, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.e.HandleWorkItem(t.Context(), fresh, 1); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 2)
}

// A branch that emits events and then fails for good stores none of them: only a completed
// branch's events are part of the history.
func TestEngine_FanOut_FailedBranchStoresNoEmittedEvents(t *testing.T) {
	t.Parallel()
	var calls [8]atomic.Int32
	r := newRig(t, engine.Options{}, false, countingFan(t, &calls, func(item int) bool { return item == 1 }))
	id := r.start(t, "fan", "", fanInput(2))
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusFailed {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	seen := 0
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryCustom {
			seen++
			if !strings.Contains(string(ev.Data), `"data":0`) {
				t.Errorf("a failed branch's event is stored: %s", ev.Data)
			}
		}
	}
	if seen != 1 {
		t.Fatalf("%d emitted events stored, want branch 0's", seen)
	}
}

// A plain item that meets an open fan-out puts back only the branches without a completion
// row: a completed branch's item is not sent again.
func TestEngine_FanOut_PutBackSendsOnlyUnfinishedBranches(t *testing.T) {
	t.Parallel()
	var calls [8]atomic.Int32
	r := newRig(t, engine.Options{}, false, countingFan(t, &calls, nil))
	id := r.start(t, "fan", "", fanInput(3))
	first, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), first[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), first[0])
	b0 := takeBranchMessage(t, r, 0)
	if err := r.e.HandleWorkItem(t.Context(), b0, 1); err != nil {
		t.Fatal(err)
	}
	r.drain(t) // branches 1 and 2's items are lost
	var sent []string
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		sent = append(sent, string(body))
		return 1, nil
	}
	if err := r.e.HandleWorkItem(t.Context(), first[0].Body, 2); err != nil { // the fan-out's item comes back
		t.Fatal(err)
	}
	if len(sent) != 2 || strings.Contains(strings.Join(sent, " "), `"br":0,`) {
		t.Fatalf("put back %q, want branches 1 and 2", sent)
	}
	r.fqueue.OnEnqueue = nil
	r.drive(t)
	assertFanDone(t, r, id, 3)
}
