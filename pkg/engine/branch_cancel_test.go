package engine_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// A fan-out's run cancelled, or cancelled and purged, while its branches are queued or running.

func TestEngine_FanOut_CancelStopsOutstandingBranches(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		calls.Add(1)
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(5))
	// The fan-out: the start's item runs plan and enqueues the branches.
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), msgs[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), msgs[0])
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusTerminated || calls.Load() != 0 {
		t.Fatalf("status %s, %d branches ran after the cancel", run.RuntimeStatus, calls.Load())
	}
	for _, ev := range r.history(t, id) {
		if strings.HasPrefix(ev.Type, "branch_") {
			t.Fatalf("a cancelled run's branch committed: %s %s", ev.Type, ev.Data)
		}
	}
}

// TestEngine_FanOut_InFlightBranchAfterCancelAndPurge: a branch still running when its run is
// cancelled, purged and started again under the same id commits nothing: the fence its
// batch merges is gone, so its row never lands in the new run's history (where the new
// run's own fan-out reserved the same sequence numbers).
func TestEngine_FanOut_InFlightBranchAfterCancelAndPurge(t *testing.T) {
	t.Parallel()
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 0 {
			first := false
			once.Do(func() { first = true })
			if first {
				close(inside)
				<-release
			}
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "same", `{"items":[7,8]}`) // the new run's items differ: 0 and 1
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), msgs[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), msgs[0])
	branch, _ := r.queue.Receive(t.Context(), 1, time.Minute) // branch 0
	done := make(chan error, 1)
	go func() { done <- r.e.HandleWorkItem(context.Background(), branch[0].Body, 1) }()
	<-inside
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	r.drain(t) // the old run's items
	r.start(t, "fan", "same", fanInput(2))
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 2)
}

// TestEngine_FanOut_BranchInFlightDuringCancel: a branch that was running when its run was
// cancelled commits nothing: the cancel closed the fan-out's fence.
func TestEngine_FanOut_BranchInFlightDuringCancel(t *testing.T) {
	t.Parallel()
	inside, release := make(chan struct{}), make(chan struct{})
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		close(inside)
		<-release
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(1))
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), msgs[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), msgs[0])
	branch, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	done := make(chan error, 1)
	go func() { done <- r.e.HandleWorkItem(context.Background(), branch[0].Body, 1) }()
	<-inside
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusTerminated {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	for _, ev := range r.history(t, id) {
		if strings.HasPrefix(ev.Type, "branch_") {
			t.Fatalf("a branch committed after its run was cancelled: %s %s", ev.Type, ev.Data)
		}
	}
}

// drain deletes every visible message.
func (r *rig) drain(t testing.TB) {
	t.Helper()
	for {
		msgs, err := r.queue.Receive(context.Background(), engine.MaxReceive, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			_ = r.queue.Delete(context.Background(), m)
		}
	}
}
