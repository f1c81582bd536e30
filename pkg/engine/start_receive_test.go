package engine_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// waitFinished waits, up to a minute, for run id to finish and returns it.
func waitFinished(t *testing.T, e *engine.Engine, id string) engine.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run, err := e.WaitRun(ctx, id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	if err != nil {
		t.Fatalf("wait for run %s: %v", id, err)
	}
	return run
}

// await waits, up to a minute, for ch to close.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("gave up waiting: %s", what)
	}
}

// With ReceiveOnStart and no dispatcher (a queue trigger's engine), a start's own receive
// runs the run to its end: nobody else touches the queue, every node runs once, and the
// item is deleted.
func TestEngine_ReceiveOnStart_RunsTheRunWithoutTheTrigger(t *testing.T) {
	var visits atomic.Int64
	g := chainGraph(t, "recv3", 3, func(ctx context.Context, s counterState) (any, error) {
		visits.Add(1)
		return incr(ctx, s)
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recv3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitFinished(t, r.e, run.InstanceID); got.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %s, want Completed", got.RuntimeStatus)
	}
	if err := r.e.Close(); err != nil { // waits for the handling's delete
		t.Fatal(err)
	}
	if n := visits.Load(); n != 3 {
		t.Errorf("nodes ran %d times, want 3", n)
	}
	if n := r.queue.Len(); n != 0 {
		t.Errorf("%d messages left on the queue, want 0", n)
	}
}

// While a start's own handling runs the first step, the trigger finds the queue empty: the
// item is hidden as any received one, so the step does not run twice.
func TestEngine_ReceiveOnStart_TriggerFindsTheItemHidden(t *testing.T) {
	var visits atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	g := chainGraph(t, "recvhold", 1, func(ctx context.Context, s counterState) (any, error) {
		if visits.Add(1) == 1 {
			close(entered)
			<-release
		}
		return incr(ctx, s)
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvhold"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, entered, "the start's handling runs the first step")
	msgs, err := r.queue.Receive(t.Context(), engine.MaxReceive, time.Minute) // the host's listener
	if err != nil || len(msgs) != 0 {
		t.Fatalf("the trigger received %d messages (%v) while the start's handling ran the step, want none", len(msgs), err)
	}
	close(release)
	if got := waitFinished(t, r.e, run.InstanceID); got.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %s, want Completed", got.RuntimeStatus)
	}
	_ = r.e.Close()
	if n := visits.Load(); n != 1 {
		t.Errorf("the node ran %d times, want 1", n)
	}
	if n := r.queue.Len(); n != 0 {
		t.Errorf("%d messages left on the queue, want 0", n)
	}
}

// A start's own handling that dies in the first step (its goroutine taken down, as a killed
// process) leaves the item to come back: the trigger's redelivery after the visibility
// timeout runs the run to its end.
func TestEngine_ReceiveOnStart_DeadHandlingLeavesTheItemToTheTrigger(t *testing.T) {
	clk := newFakeClock()
	var visits atomic.Int64
	died := make(chan struct{})
	g := chainGraph(t, "recvdie", 2, func(ctx context.Context, s counterState) (any, error) {
		if visits.Add(1) == 1 {
			close(died)
			runtime.Goexit()
		}
		return incr(ctx, s)
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true, Clock: clk.now, VisibilityTimeout: time.Minute}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvdie"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, died, "the start's handling runs the first step")
	ctx := t.Context()
	var msgs []engine.Message
	for range 100 { // the handling's goroutine is ending; its item stays hidden
		if msgs, err = r.queue.Receive(ctx, engine.MaxReceive, time.Minute); err != nil || len(msgs) != 0 {
			t.Fatalf("the trigger received %d messages (%v) before the visibility timeout", len(msgs), err)
		}
		runtime.Gosched()
	}
	clk.advance(time.Minute + time.Second)
	if msgs, err = r.queue.Receive(ctx, engine.MaxReceive, time.Minute); err != nil || len(msgs) != 1 {
		t.Fatalf("after the visibility timeout the trigger received %d messages (%v), want 1", len(msgs), err)
	}
	if msgs[0].DequeueCount != 2 {
		t.Errorf("redelivery's dequeue count = %d, want 2", msgs[0].DequeueCount)
	}
	if err := r.e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.e.GetRun(ctx, run.InstanceID); got.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %s, want Completed", got.RuntimeStatus)
	}
	if n := visits.Load(); n != 3 { // the first node twice (the death, the redelivery), then the second
		t.Errorf("nodes ran %d times, want 3", n)
	}
}

// Close ends a start's own handling and waits for it; its item stays on the queue for the
// trigger.
func TestEngine_ReceiveOnStart_CloseEndsTheHandling(t *testing.T) {
	entered := make(chan struct{})
	g := chainGraph(t, "recvclose", 1, func(ctx context.Context, s counterState) (any, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvclose"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, entered, "the start's handling runs the first step")
	if err := r.e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := r.queue.Len(); n != 1 {
		t.Errorf("%d messages on the queue after Close, want the run's 1", n)
	}
	if got, _ := r.e.GetRun(t.Context(), run.InstanceID); got.RuntimeStatus.Finished() {
		t.Errorf("run: %s, want it unfinished, left to the trigger", got.RuntimeStatus)
	}
}

// Without ReceiveOnStart a start only enqueues: the item waits for the trigger.
func TestEngine_ReceiveOnStart_OffLeavesTheItemToTheTrigger(t *testing.T) {
	g := chainGraph(t, "recvoff", 1, nil)
	r := newRig(t, engine.Options{}, false, g)
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvoff"}); err != nil {
		t.Fatal(err)
	}
	_ = r.e.Close()
	if got := r.counts.Receives.Load(); got != 0 {
		t.Errorf("the start received %d times, want 0", got)
	}
	if n := r.queue.Len(); n != 1 {
		t.Errorf("%d messages on the queue, want 1", n)
	}
}

// A start's own handling lasts at most StepLease (functionTimeout under the host): a step
// still running then has its context ended, the handling fails, and its item goes back to
// the queue for the trigger, which runs the step again; the failure is not counted as a
// death.
func TestEngine_ReceiveOnStart_StepPastTheLeaseGoesBackToTheTrigger(t *testing.T) {
	var visits atomic.Int64
	entered := make(chan struct{})
	g := chainGraph(t, "recvlease", 1, func(ctx context.Context, s counterState) (any, error) {
		if visits.Add(1) == 1 {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return incr(ctx, s)
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true, StepLease: 100 * time.Millisecond}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvlease"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, entered, "the start's handling runs the first step")
	m := receiveWithin(t, r, time.Minute) // the retried copy, after the handling gave up
	if err := r.e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
		t.Fatal(err)
	}
	got, _ := r.e.GetRun(t.Context(), run.InstanceID)
	if got.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %s %s, want Completed", got.RuntimeStatus, got.Output)
	}
	if n := visits.Load(); n != 2 {
		t.Errorf("the node ran %d times, want 2", n)
	}
}

// A step that ignores its context's end keeps the start's handling running, but not its
// item: renewed only until StepLease, the item comes back to the trigger a visibility timeout
// later, as a killed invocation's does.
func TestEngine_ReceiveOnStart_StuckStepLetsTheItemGo(t *testing.T) {
	var visits atomic.Int64
	stuck, entered := make(chan struct{}), make(chan struct{})
	defer close(stuck)
	g := chainGraph(t, "recvstuck", 1, func(ctx context.Context, s counterState) (any, error) {
		if visits.Add(1) == 1 {
			close(entered)
			<-stuck // ignores ctx
		}
		return incr(ctx, s)
	})
	r := newRig(t, engine.Options{ReceiveOnStart: true, StepLease: 50 * time.Millisecond, VisibilityTimeout: 600 * time.Millisecond}, false, g)
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "recvstuck"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, entered, "the start's handling runs the first step")
	m := receiveWithin(t, r, time.Minute)
	if m.DequeueCount != 2 {
		t.Errorf("dequeue count = %d, want 2 (a redelivery)", m.DequeueCount)
	}
	if err := r.e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.e.GetRun(t.Context(), run.InstanceID); got.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %s, want Completed", got.RuntimeStatus)
	}
}

// receiveWithin receives one message from r's queue as a trigger would, polling for up to
// within.
func receiveWithin(t *testing.T, r *rig, within time.Duration) engine.Message {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msgs, err := r.queue.Receive(t.Context(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 1 {
			return msgs[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no message came back to the trigger")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
