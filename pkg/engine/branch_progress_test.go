package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// A branch's progress (its attempt, its back-off, the deaths counted against it) lives in
// storage: redeliveries, lost deletes, put-backs, rescues and outages change it exactly as
// they change a step's.

// commitsBranchIndex reports whether a batch is the commit of branch index (its completion
// row's data names it).
func commitsBranchIndex(ops []engine.Op, index string) bool {
	for _, op := range ops {
		if t := op.Entity.Properties["Type"]; t == engine.HistoryBranchCompleted || t == engine.HistoryBranchFailed {
			if d, _ := op.Entity.Properties["Data"].(string); strings.HasPrefix(d, `{"index":`+index+`,`) {
				return true
			}
		}
	}
	return false
}

// Two storage outages, each longer than the delivery budget, while a fan-out's branch is
// in flight: the branch's item reaches the poison queue twice, and is put back both times;
// no start of it died, so nothing counts towards poison, and the run completes as the chain
// run beside it does.
func TestEngine_FanOut_TwoOutagesLongerThanDeliveryBudget_BranchCompletes(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute, MaxStepStarts: 2}, false, fanGraph(t, "fan", nil))
	h := &hostSim{r: r, clk: clk, visibility: 5 * time.Second, poll: time.Second, repairDue: time.Minute,
		repairPeriod: 30 * time.Second, maxDequeue: 5}
	fan := r.start(t, "fan", "", fanInput(3))
	chain := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	var outages atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitsBranchIndex(ops, "1") && outages.Load() < 2 {
			outages.Add(1)
			r.outage.Begin() // branch 1's commit takes storage down
			return enginetest.ErrInjected
		}
		return nil
	}
	for range 2 {
		before := h.poisoned
		for h.step(); !r.outage.Down(); h.step() {
			if h.elapsed > time.Hour {
				t.Fatal("the outage did not begin")
			}
		}
		end := h.elapsed + 90*time.Second // three times the budget of 5 × (5 s + 1 s)
		for h.elapsed < end {
			h.step()
		}
		r.outage.End()
		if h.poisoned == before {
			t.Fatal("no message reached the poison queue: the outage was not longer than the budget")
		}
		for poisonOf(t, r).Len() > 0 {
			h.step()
			if h.elapsed > end+10*time.Minute {
				t.Fatalf("the branch's item was not poisoned and rescued (poisoned %d)", h.poisoned)
			}
		}
	}
	for _, id := range []string{fan, chain} {
		run := r.waitFor(t, id, func(run engine.Run) bool {
			h.step()
			return run.RuntimeStatus.Finished()
		})
		if run.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("run %s: %s %s", id, run.RuntimeStatus, run.Output)
		}
	}
	assertFanDone(t, r, fan, 3)
	if outages.Load() != 2 || h.poisoned < 2 {
		t.Fatalf("%d outages, %d poisoned messages", outages.Load(), h.poisoned)
	}
}

// A branch whose worker dies in it every time (its handler kills the process) fails once it
// was started MaxStepStarts times without completing, with the error a step gets: the holds
// its dead starts left in its progress row count the deaths.
func TestEngine_FanOut_BranchKillingItsWorker_FailsAtMaxStepStarts(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var starts atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			starts.Add(1)
			runtime.Goexit() // the worker is killed mid-node
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 1)
	for count := int64(1); count <= 5; count++ {
		if died, err := deliverDying(r, body, count); !died {
			t.Fatalf("delivery %d returned (%v) instead of dying in the node", count, err)
		}
		clk.advance(r.e.Options().VisibilityTimeout)
	}
	if died, err := deliverDying(r, body, 6); died || err != nil {
		t.Fatalf("the 6th delivery started the branch again (died %v, %v)", died, err)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	const want = "branch 1 of 2 (node 'work'): started 5 times without completing: its worker died or timed out each time"
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), want) || starts.Load() != 5 {
		t.Fatalf("%d starts, status %s output %s; want Failed: %s", starts.Load(), run.RuntimeStatus, run.Output, want)
	}
}

// takeBranchMessage runs the rig's queue until the message of branch index is at its front,
// handling every other message, and takes that one off the queue.
func takeBranchMessage(t *testing.T, r *rig, index int) []byte {
	t.Helper()
	mark := fmt.Sprintf(`"br":%d,`, index)
	for range 100 {
		msgs, err := r.queue.Receive(t.Context(), 1, time.Minute)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("no message of branch %d (%v)", index, err)
		}
		m := msgs[0]
		_ = r.queue.Delete(t.Context(), m)
		if strings.Contains(string(m.Body), mark) {
			return m.Body
		}
		if err := r.e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no message of branch %d", index)
	return nil
}

// A failed branch attempt whose message comes back (its delete was lost, or its worker died
// after enqueuing the retry) does not run the attempt again: the progress row says the next
// attempt is due after its back-off. Under MaxAttempts 3 the handler runs as attempts
// [1 2 3], as a step's does.
func TestEngine_FanOut_FailedAttemptRedelivered_RunsEachAttemptOnce(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var mu sync.Mutex
	var attempts []int
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Minute}},
	}}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 0 {
			step, _ := durable.StepInfoFrom(ctx)
			mu.Lock()
			attempts = append(attempts, step.Attempt)
			mu.Unlock()
			return nil, errors.New("flaky")
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	// Every delivery of branch 0 comes back once more after it was handled (a lost delete).
	for range 12 {
		msgs, _ := r.queue.Receive(t.Context(), engine.MaxReceive, time.Second)
		for _, m := range msgs {
			if err := r.e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(m.Body), `"br":0`) || m.DequeueCount > 1 {
				_ = r.queue.Delete(t.Context(), m)
			}
		}
		clk.advance(2 * time.Second)
		if len(msgs) == 0 {
			clk.advance(time.Minute)
		}
	}
	r.drive(t)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(attempts, []int{1, 2, 3}) {
		t.Fatalf("branch 0 ran as attempts %v, want [1 2 3]", attempts)
	}
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusFailed {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
}

// A plain work item that meets an open fan-out (the fan-out's own item redelivered) puts
// back the branches without a completion row: a branch waiting out its back-off keeps
// waiting; it does not run again at once.
func TestEngine_FanOut_PutBackKeepsABranchsBackOff(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var mu sync.Mutex
	var ran []time.Time
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Minute}},
	}}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			step, _ := durable.StepInfoFrom(ctx)
			mu.Lock()
			ran = append(ran, clk.now())
			mu.Unlock()
			if step.Attempt == 1 {
				return nil, errors.New("flaky")
			}
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	first, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), first[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	r.drive(t) // branch 0 completes; branch 1's first attempt fails, its retry is due in a minute
	// The fan-out's own item comes back (its delete was lost): it puts branch 1 back.
	if err := r.e.HandleWorkItem(t.Context(), first[0].Body, 2); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	mu.Lock()
	if len(ran) != 1 {
		mu.Unlock()
		t.Fatalf("branch 1 ran %d times before its back-off was over", len(ran))
	}
	mu.Unlock()
	clk.advance(2 * time.Minute)
	r.drive(t)
	run := r.wait(t, id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s %s", run.RuntimeStatus, run.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 || ran[1].Sub(ran[0]) < time.Minute {
		t.Fatalf("branch 1 ran at %v", ran)
	}
}

// releasesBranchHold reports whether a batch is the release of a branch's hold: a merge of a
// progress row that clears its holder.
func releasesBranchHold(ops []engine.Op) bool {
	return len(ops) == 1 && ops[0].Kind == engine.OpMerge && strings.HasPrefix(ops[0].Entity.RowKey, "k") &&
		ops[0].Entity.Properties["Holder"] == ""
}

// A branch whose handlings fail on storage errors (its commit fails; its hold's release
// fails too, or not) is never failed as poison however often its item comes back, as a
// step is not (TestEngine_CommitAndReleaseFail_NeverPoison): the engine that knows a hold
// spares it, another spares it within its lease, and a released hold counts nothing.
func TestEngine_FanOut_BranchCommitAndReleaseFail_NeverPoison(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		engines      int
		gap          time.Duration
		releaseFails bool
		skew         time.Duration // of the second engine's clock
	}{
		{"one engine, release fails, items back past the lease", 1, 2 * engine.DefaultVisibilityTimeout, true, 0},
		{"two engines, release fails, items back within the lease", 2, 30 * time.Second, true, 0},
		{"two engines, release works, items back past the lease", 2, 2 * engine.DefaultVisibilityTimeout, false, 0},
		{"two engines, one 2 min ahead, release fails, items back within the lease", 2, 30 * time.Second, true, 2 * time.Minute},
		{"two engines, one 2 min behind, release fails, items back within the lease", 2, 30 * time.Second, true, -2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var calls [8]atomic.Int32
			r := newRig(t, engine.Options{Clock: clk.now, MaxStepStarts: 2}, false, countingFan(t, &calls, nil))
			engines := []*engine.Engine{r.e}
			if tc.engines == 2 {
				engines = append(engines, r.deploy(t, func() time.Time { return clk.now().Add(tc.skew) }, countingFan(t, &calls, nil)).e)
			}
			id := r.start(t, "fan", "", fanInput(2))
			body := takeBranchMessage(t, r, 1)
			var faulty atomic.Bool
			var released atomic.Int32
			faulty.Store(true)
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				switch {
				case !faulty.Load():
				case releasesBranchHold(ops):
					released.Add(1)
					if tc.releaseFails {
						return enginetest.ErrInjected
					}
				case commitsBranchIndex(ops, "1"):
					return enginetest.ErrInjected
				}
				return nil
			}
			const failed = 9
			for count := int64(1); count <= failed; count++ {
				if err := engines[int(count)%len(engines)].HandleWorkItem(t.Context(), body, count); err == nil {
					t.Fatalf("delivery %d succeeded despite the faults", count)
				}
				clk.advance(tc.gap)
			}
			if released.Load() == 0 {
				t.Fatal("no release was tried: the scenario tests nothing")
			}
			faulty.Store(false)
			if err := engines[0].HandleWorkItem(t.Context(), body, failed+1); err != nil {
				t.Fatal(err)
			}
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s output %s: failed handlings were counted as deaths", run.RuntimeStatus, run.Output)
			}
			if n := calls[1].Load(); n != failed+1 {
				t.Errorf("branch 1 ran %d times, want %d", n, failed+1)
			}
		})
	}
}

// Two workers run the same attempt of a branch (a duplicate delivery) and both fail: the
// second to record the failure finds it recorded, and leaves the back-off the first set.
func TestEngine_FanOut_DuplicateFailedAttempt_KeepsTheFirstBackOff(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	inside, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var ranAt [4]time.Time
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Minute, MaxBackoff: time.Minute}},
	}}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			n := calls.Add(1)
			ranAt[n-1] = clk.now()
			switch n {
			case 1:
				close(inside)
				<-release // the slow duplicate
				return nil, errors.New("flaky")
			case 2:
				return nil, errors.New("flaky")
			}
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 1)
	done := make(chan error, 1)
	go func() { done <- r.e.HandleWorkItem(context.Background(), body, 1) }()
	<-inside
	if err := r.e.HandleWorkItem(t.Context(), body, 2); err != nil { // the duplicate fails first
		t.Fatal(err)
	}
	clk.advance(30 * time.Second)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	clk.advance(31 * time.Second) // the first recorded back-off is over; a second would not be
	r.drive(t)
	run := r.wait(t, id)
	if run.RuntimeStatus != engine.StatusCompleted || calls.Load() != 3 {
		t.Fatalf("status %s after %d calls: the retry did not run when its back-off ended", run.RuntimeStatus, calls.Load())
	}
}

// A branch item on the poison queue whose branch has committed only enqueues the join: no
// branch item goes back on the queue.
func TestEngine_FanOut_PoisonedCommittedBranch_OnlyEnqueuesTheJoin(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 0)
	if err := r.e.HandleWorkItem(t.Context(), body, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.queue.PoisonQueue().Enqueue(t.Context(), body, 0); err != nil { // its delete was lost, then its deliveries ran out
		t.Fatal(err)
	}
	var sent []string
	r.fqueue.OnEnqueue = func(b []byte) (int, error) {
		sent = append(sent, string(b))
		return 1, nil
	}
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.fqueue.OnEnqueue = nil
	if strings.Contains(strings.Join(sent, " "), `"br":0,`) {
		t.Fatalf("the rescue sent a committed branch again: %q", sent)
	}
	r.drive(t)
	assertFanDone(t, r, id, 2)
}

// A branch item on the poison queue whose branch waits out a back-off goes back on the
// queue delayed to the back-off's end.
func TestEngine_FanOut_PoisonedBranchInBackOff_BackAfterTheBackOff(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var calls [8]atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Hour, MaxBackoff: time.Hour}},
	}}, false, countingFan(t, &calls, func(item int) bool { return item == 1 && calls[1].Load() == 1 }))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 1)
	if err := r.e.HandleWorkItem(t.Context(), body, 1); err != nil { // fails: its retry is due in an hour
		t.Fatal(err)
	}
	r.drain(t) // the retry's item is lost
	if err := r.queue.PoisonQueue().Enqueue(t.Context(), body, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("sweep rescued %d (%v)", n, err)
	}
	clk.advance(59 * time.Minute)
	if msgs, _ := r.queue.Receive(t.Context(), engine.MaxReceive, time.Minute); len(msgs) != 0 {
		t.Fatalf("the rescued item is back before its back-off ended: %s", msgs[0].Body)
	}
	clk.advance(2 * time.Hour)
	r.drive(t)
	if run := r.wait(t, id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
}

// A branch item on the poison queue whose branch was started MaxStepStarts times without
// completing fails the branch, and its run, at once.
func TestEngine_FanOut_PoisonedBranchPastTheKillLimit_FailsAtRescue(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, MaxStepStarts: 3}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			runtime.Goexit()
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 1)
	for count := int64(1); count <= 3; count++ {
		if died, _ := deliverDying(r, body, count); !died {
			t.Fatalf("delivery %d did not die", count)
		}
		clk.advance(r.e.Options().VisibilityTimeout)
	}
	r.drive(t) // branch 0, then the join item that finds branch 1 missing
	r.drain(t)
	if err := r.queue.PoisonQueue().Enqueue(t.Context(), body, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryBranchFailed {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d branch_failed rows after the rescue, want 1: the rescue did not fail the branch", failed)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "started 3 times without completing") {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
}

// A branch redelivered after its worker died runs with StepInfo.Attempt 2: Attempt counts
// the starts that may have run the handler.
func TestEngine_FanOut_BranchRedeliveredAfterACrash_AttemptGrows(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var seen []int
	var mu sync.Mutex
	r := newRig(t, engine.Options{Clock: clk.now}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			step, _ := durable.StepInfoFrom(ctx)
			mu.Lock()
			seen = append(seen, step.Attempt)
			n := len(seen)
			mu.Unlock()
			if n <= 2 {
				runtime.Goexit()
			}
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(2))
	body := takeBranchMessage(t, r, 1)
	for count := int64(1); count <= 2; count++ {
		if died, _ := deliverDying(r, body, count); !died {
			t.Fatalf("delivery %d did not die", count)
		}
		clk.advance(r.e.Options().VisibilityTimeout)
	}
	if err := r.e.HandleWorkItem(t.Context(), body, 3); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 2)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []int{1, 2, 3}) {
		t.Fatalf("branch 1 ran as attempts %v, want [1 2 3]", seen)
	}
}

// A branch whose worker is killed in it at every start fails at the kill limit whatever the
// skew between the instances that judge its holds: each death's hold is past its lease by the
// store's time when the next start, on the other instance, meets it.
func TestEngine_FanOut_BranchDeathsCountedWhateverTheSkew(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{2 * time.Minute, -2 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var starts atomic.Int32
			dying := func(ctx context.Context, s fanState) (any, error) {
				if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
					starts.Add(1)
					runtime.Goexit()
				}
				return fanWork(ctx, s)
			}
			r := newRig(t, engine.Options{Clock: clk.now}, false, fanGraph(t, "fan", dying))
			other := r.deploy(t, func() time.Time { return clk.now().Add(skew) }, fanGraph(t, "fan", dying))
			rigs := []*rig{r, other}
			id := r.start(t, "fan", "", fanInput(2))
			body := takeBranchMessage(t, r, 1)
			for count := int64(1); count <= 5; count++ {
				if died, err := deliverDying(rigs[int(count)%2], body, count); !died {
					t.Fatalf("delivery %d returned (%v) instead of dying in the node", count, err)
				}
				clk.advance(r.e.Options().VisibilityTimeout)
			}
			if died, err := deliverDying(rigs[0], body, 6); died || err != nil {
				t.Fatalf("the sixth delivery died %v (err %v): deaths went uncounted", died, err)
			}
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "started 5 times without completing") || starts.Load() != 5 {
				t.Fatalf("%d starts, status %s output %s", starts.Load(), run.RuntimeStatus, run.Output)
			}
		})
	}
}
