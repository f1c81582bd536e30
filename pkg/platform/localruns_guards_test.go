package platform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform"
)

// At its MaxRuns the local backend forgets its oldest finished run to take a new one, and
// refuses a new run only when every run it keeps is unfinished.
func TestLocalRuns_AtItsLimit_EvictsTheOldestFinishedRun(t *testing.T) {
	release := make(chan struct{})
	exec := executor(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		if strings.HasPrefix(run.RunID, "slow") {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return platform.RunSuccess, nil
	})
	runs := platform.NewLocalRuns(exec, platform.LocalRunsOptions{MaxRuns: 2})
	t.Cleanup(func() { close(release); _ = runs.Close() })
	ctx := t.Context()
	submit := func(id, thread string) error {
		return runs.Submit(ctx, platform.Run{RunID: id, ThreadID: thread, Status: platform.RunPending,
			Request: platform.RunRequest{AssistantID: "echo_agent"}})
	}
	for i := range 2 {
		id := fmt.Sprintf("fast-%d", i)
		if err := submit(id, "t"+id); err != nil {
			t.Fatal(err)
		}
		if run, err := runs.Join(ctx, "t"+id, id); err != nil || run.Status != platform.RunSuccess {
			t.Fatalf("join %s: %+v %v", id, run, err)
		}
	}
	// Full of finished runs: the oldest goes, the newer stays.
	if err := submit("slow-0", "ts0"); err != nil {
		t.Fatalf("submit at the limit with finished runs kept: %v", err)
	}
	if _, err := runs.Get(ctx, "tfast-0", "fast-0"); err == nil {
		t.Error("the oldest finished run is still kept")
	}
	if _, err := runs.Get(ctx, "tfast-1", "fast-1"); err != nil {
		t.Errorf("the newer finished run was forgotten: %v", err)
	}
	if err := submit("slow-1", "ts1"); err != nil {
		t.Fatalf("submit evicting the last finished run: %v", err)
	}
	// Full of unfinished runs: refused, nothing forgotten.
	if err := submit("slow-2", "ts2"); err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("submit with every kept run unfinished: %v, want the backend full", err)
	}
	for _, id := range []string{"slow-0", "slow-1"} {
		if _, err := runs.Get(ctx, "t"+strings.Replace(id, "slow-", "s", 1), id); err != nil {
			t.Errorf("unfinished run %s was forgotten: %v", id, err)
		}
	}
}

// A run whose thread is busy (the executor answers ErrRetryLater) goes back to pending and is
// run again after RetryGap, not failed; it then finishes as the executor says.
func TestLocalRuns_BusyThread_RetriedNotFailed(t *testing.T) {
	var calls atomic.Int32
	exec := executor(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		if calls.Add(1) <= 2 {
			return "", platform.ErrRetryLater
		}
		return platform.RunSuccess, nil
	})
	runs := platform.NewLocalRuns(exec, platform.LocalRunsOptions{RetryGap: time.Millisecond})
	t.Cleanup(func() { _ = runs.Close() })
	ctx := t.Context()
	if err := runs.Submit(ctx, platform.Run{RunID: "r", ThreadID: "t", Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent"}}); err != nil {
		t.Fatal(err)
	}
	run, err := runs.Join(ctx, "t", "r")
	if err != nil || run.Status != platform.RunSuccess {
		t.Fatalf("join: %+v %v, want success after the thread was free", run, err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("executor called %d times, want 3 (two busy answers, then the run)", n)
	}
}

// A run whose graph fails ends in error, not interrupted: only a cancel or a closing backend
// interrupts a run.
func TestLocalRuns_FailingRun_EndsInError(t *testing.T) {
	exec := executor(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		return "", errors.New("graph failed")
	})
	runs := platform.NewLocalRuns(exec, platform.LocalRunsOptions{})
	t.Cleanup(func() { _ = runs.Close() })
	ctx := t.Context()
	if err := runs.Submit(ctx, platform.Run{RunID: "r", ThreadID: "t", Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent"}}); err != nil {
		t.Fatal(err)
	}
	if run, err := runs.Join(ctx, "t", "r"); err != nil || run.Status != platform.RunError {
		t.Fatalf("join: %s %v, want error", run.Status, err)
	}
}
