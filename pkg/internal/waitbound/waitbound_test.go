package waitbound

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun_ReturnsTrueWhenWorkEndsInTime(t *testing.T) {
	t.Parallel()
	var got int
	if !Run(t.Context(), time.Minute, func(context.Context) { got = 42 }) {
		t.Fatal("Run = false, want true")
	}
	if got != 42 {
		t.Fatalf("work's write not visible: got %d", got)
	}
}

func TestRun_NoBoundWaitsForWork(t *testing.T) {
	t.Parallel()
	if !Run(t.Context(), 0, func(context.Context) { time.Sleep(20 * time.Millisecond) }) {
		t.Fatal("Run with no bound = false, want true")
	}
}

func TestRun_PastTheBoundWorkGoesOnDetached(t *testing.T) {
	t.Parallel()
	reqCtx, endRequest := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	release := make(chan struct{})
	ended := make(chan error, 1)
	var value atomic.Value
	ok := Run(reqCtx, 20*time.Millisecond, func(ctx context.Context) {
		value.Store(ctx.Value(ctxKey{}))
		<-release
		ended <- ctx.Err()
	})
	if ok {
		t.Fatal("Run = true, want false (the bound passed)")
	}
	endRequest() // the response was sent: the request's context ends
	close(release)
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("detached work's context ended with the request: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("work did not end")
	}
	if value.Load() != "v" {
		t.Fatalf("work's context lost the request's values: %v", value.Load())
	}
}

func TestRun_RequestEndCancelsWorkWhileWaiting(t *testing.T) {
	t.Parallel()
	reqCtx, endRequest := context.WithCancel(t.Context())
	var err error
	time.AfterFunc(10*time.Millisecond, endRequest)
	ok := Run(reqCtx, time.Minute, func(ctx context.Context) {
		<-ctx.Done()
		err = ctx.Err()
	})
	if !ok {
		t.Fatal("Run = false, want true (work ended when cancelled)")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("work's context: %v, want canceled", err)
	}
}

func TestSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{200 * time.Second, "200 s"}, {250 * time.Millisecond, "0.25 s"}, {90 * time.Second, "90 s"}} {
		if got := Seconds(c.d); got != c.want {
			t.Errorf("Seconds(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

type ctxKey struct{}

func TestRun_IdleWorkersEnd(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 3 {
		started.Add(1)
		go Run(t.Context(), time.Minute, func(context.Context) { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	for { // the three go idle
		workers.mu.Lock()
		idle, reaping := len(workers.idle), workers.reaping
		workers.mu.Unlock()
		if idle >= 3 {
			if !reaping {
				t.Fatal("workers are idle, and no reaping is scheduled")
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	workers.mu.Lock()
	before := workers.idle[0].idleSince.Add(workerIdle)
	next, ok := reapDue(before.Add(-time.Millisecond))
	if len(workers.idle) < 3 || !ok || next != time.Millisecond {
		t.Errorf("before the first is due: %d idle, next in %v (%v), want ≥ 3, 1ms", len(workers.idle), next, ok)
	}
	_, ok = reapDue(time.Now().Add(workerIdle))
	idle := len(workers.idle)
	workers.mu.Unlock()
	if ok || idle != 0 {
		t.Fatalf("after workerIdle: %d idle (%v), want none", idle, ok)
	}
}

func BenchmarkRun(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		Run(b.Context(), time.Minute, func(context.Context) { n++ })
	}
}
