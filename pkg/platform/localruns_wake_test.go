package platform

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// A run waiting for its busy thread starts as soon as Wake says the thread was released, not
// after RetryGap; a Wake for a thread with no waiting run does nothing.
func TestLocalRuns_Wake_StartsTheWaitingRunAtOnce(t *testing.T) {
	var busy atomic.Bool
	var calls atomic.Int32
	busy.Store(true)
	exec := runExecutorFunc(func(ctx context.Context, run Run) (RunStatus, error) {
		calls.Add(1)
		if busy.Load() {
			return "", ErrRetryLater
		}
		return RunSuccess, nil
	})
	runs := NewLocalRuns(exec, LocalRunsOptions{RetryGap: time.Hour})
	t.Cleanup(func() { _ = runs.Close() })
	runs.Wake("t") // nothing waits: no effect
	if err := runs.Submit(t.Context(), Run{RunID: "r", ThreadID: "t", Status: RunPending}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		runs.mu.Lock()
		defer runs.mu.Unlock()
		return runs.waiting["t"] != nil
	})
	busy.Store(false)
	runs.Wake("t")
	runs.Wake("t") // a second wake finds nothing waiting
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	run, err := runs.Join(ctx, "t", "r")
	if err != nil || run.Status != RunSuccess {
		t.Fatalf("join: %+v %v, want success right after the wake (RetryGap is an hour)", run, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("executor called %d times, want 2 (busy, then the run)", n)
	}
}

// Through the routes' service: a background run queued behind a blocking run that holds the
// thread starts when that run releases the thread.
func TestService_ReleasedThread_WakesTheQueuedRun(t *testing.T) {
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(newMemGraph(), "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	store := threads.NewMemory()
	svc, err := Mount(app, Options{Threads: store, NewRunBackend: func(exec RunExecutor) (RunBackend, error) {
		return NewLocalRuns(exec, LocalRunsOptions{RetryGap: time.Hour}), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx, now := t.Context(), time.Now()
	if err := store.Create(ctx, threads.Thread{ThreadID: "t", CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Acquire(ctx, "t", "chat", nil, now); err != nil { // the blocking run
		t.Fatal(err)
	}
	if err := svc.runs.Submit(ctx, Run{RunID: "r", ThreadID: "t", Status: RunPending, Request: RunRequest{AssistantID: "chat"}}); err != nil {
		t.Fatal(err)
	}
	local := svc.runs.(*LocalRuns)
	waitFor(t, func() bool {
		local.mu.Lock()
		defer local.mu.Unlock()
		return local.waiting["t"] != nil
	})
	if err := svc.releaseThread(ctx, "t", threads.StatusIdle, nil); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if run, err := svc.runs.Join(jctx, "t", "r"); err != nil || run.Status != RunSuccess {
		t.Fatalf("join: %+v %v, want success once the blocking run released the thread", run, err)
	}
}

type runExecutorFunc func(context.Context, Run) (RunStatus, error)

func (f runExecutorFunc) ExecuteRun(ctx context.Context, run Run) (RunStatus, error) {
	return f(ctx, run)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
	}
}
