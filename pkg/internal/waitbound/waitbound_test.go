package waitbound

import (
	"context"
	"errors"
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
