package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// A sleeping run's status says until when it sleeps; once the wake-up has passed it says
// nothing more.
func TestEngine_GetRun_SleepingUntil(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	until := clk.now().Add(90 * time.Minute)
	r := newRig(t, engine.Options{Clock: clk.now}, false, sleepGraph(t, "sl", func(counterState) durable.RouteDecision {
		return durable.SleepUntil(until, "wake")
	}))
	id := r.start(t, "sl", "", `{}`)
	r.drive(t)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !run.SleepingUntil.Equal(until) || run.NodeRetry != nil {
		t.Fatalf("sleeping run: SleepingUntil %v, NodeRetry %+v; want %v and none", run.SleepingUntil, run.NodeRetry, until)
	}
	clk.advance(90*time.Minute + time.Second)
	if run, _ = r.e.GetRun(t.Context(), id); !run.SleepingUntil.IsZero() {
		t.Errorf("past the wake-up: SleepingUntil %v, want zero", run.SleepingUntil)
	}
	r.drive(t)
	if run, _ = r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted || !run.SleepingUntil.IsZero() {
		t.Errorf("woken run: %s, SleepingUntil %v", run.RuntimeStatus, run.SleepingUntil)
	}
}

// A node whose attempt failed and that backs off before its retry: the status names the next
// attempt and when it runs, and no sleep.
func TestEngine_GetRun_NodeRetry(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var calls atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"flaky": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Minute}},
	}}, false, chainGraph(t, "flaky", 1, func(ctx context.Context, s counterState) (any, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("flaky")
		}
		return incr(ctx, s)
	}))
	start := clk.now()
	id := r.start(t, "flaky", "", `{}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.NodeRetry == nil || run.NodeRetry.Attempt != 2 || !run.NodeRetry.At.Equal(start.Add(time.Minute)) || !run.SleepingUntil.IsZero() {
		t.Fatalf("run backing off: NodeRetry %+v, SleepingUntil %v; want attempt 2 at %v", run.NodeRetry, run.SleepingUntil, start.Add(time.Minute))
	}
	clk.advance(2 * time.Minute)
	r.drive(t)
	if run, _ = r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted || run.NodeRetry != nil {
		t.Errorf("after the retry: %s, NodeRetry %+v", run.RuntimeStatus, run.NodeRetry)
	}
}

// The branches of an open fan-out that back off before a retry: GetRunDetail lists them by
// index with their next attempt, in one query; GetRun (what WaitRun polls) does not read them.
func TestEngine_GetRunDetail_BranchRetries(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var fails [4]atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Minute}},
	}}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); (info.Index == 1 || info.Index == 3) && fails[info.Index].Add(1) == 1 {
			return nil, errors.New("flaky")
		}
		return fanWork(ctx, s)
	}))
	start := clk.now()
	id := r.start(t, "fan", "", fanInput(4))
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), id); run.BranchRetries != nil {
		t.Errorf("GetRun: BranchRetries %+v, want none read", run.BranchRetries)
	}
	before := r.counts.Queries.Load()
	run, err := r.e.GetRunDetail(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.counts.Queries.Load() - before; n != 1 {
		t.Errorf("GetRunDetail made %d queries, want 1", n)
	}
	at := start.Add(time.Minute)
	want := []engine.BranchRetry{{Index: 1, Attempt: 2, At: at}, {Index: 3, Attempt: 2, At: at}}
	if !slices.EqualFunc(run.BranchRetries, want, func(a, b engine.BranchRetry) bool {
		return a.Index == b.Index && a.Attempt == b.Attempt && a.At.Equal(b.At)
	}) {
		t.Fatalf("BranchRetries %+v, want %+v", run.BranchRetries, want)
	}
	clk.advance(2 * time.Minute)
	if run, _ = r.e.GetRunDetail(t.Context(), id); len(run.BranchRetries) != 0 {
		t.Errorf("past the back-off: BranchRetries %+v, want none", run.BranchRetries)
	}
	r.drive(t)
	assertFanDone(t, r, id, 4)
	before = r.counts.Queries.Load()
	if run, _ = r.e.GetRunDetail(t.Context(), id); len(run.BranchRetries) != 0 || r.counts.Queries.Load() != before {
		t.Errorf("joined run: BranchRetries %+v, %d queries; want none and none", run.BranchRetries, r.counts.Queries.Load()-before)
	}
}
