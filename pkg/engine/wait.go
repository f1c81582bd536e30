package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// RunSettled reports whether a run is finished or waiting for an event: the points where a
// caller that started it can stop watching.
func RunSettled(r Run) bool {
	if r.RuntimeStatus.Finished() {
		return true
	}
	if len(r.CustomStatus) == 0 {
		return false
	}
	var cs struct {
		Waiting *string `json:"waiting_for_event"`
	}
	return json.Unmarshal(r.CustomStatus, &cs) == nil && cs.Waiting != nil
}

// runFinished reports whether a run is finished (Completed, Failed or Terminated): the
// default condition of WaitRun.
func runFinished(r Run) bool { return r.RuntimeStatus.Finished() }

// WaitRun polls a run until done(run) holds and returns it. nil waits for a finished run
// (Completed, Failed or Terminated); pass RunSettled to stop at a wait for an event too. Changes made
// by this engine wake it at once; changes by other processes are seen within 100 ms.
// Errors: ErrRunNotFound, or the context's error.
func (e *Engine) WaitRun(ctx context.Context, instanceID string, done func(Run) bool) (Run, error) {
	if done == nil {
		done = runFinished
	}
	e.changes.waiters.Add(1)
	defer e.changes.waiters.Add(-1)
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	for {
		changed := e.changes.wait()
		r, err := e.GetRun(ctx, instanceID)
		if err != nil {
			return Run{}, err
		}
		if done(r) {
			return r, nil
		}
		t.Reset(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-changed:
		case <-t.C:
		}
	}
}

// notifier broadcasts "some run changed" to local waiters, and "this run changed" to the
// feeds waiting on it. It costs nothing while nobody waits.
type notifier struct {
	waiters atomic.Int32
	mu      sync.Mutex
	ch      chan struct{} // guarded by mu; closed on the next change
	runs    runSignals    // feeds by run (feed.go)
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// notify tells the waiters that run runID changed.
func (n *notifier) notify(runID string) {
	n.runs.notify(runID)
	if n.waiters.Load() == 0 {
		return
	}
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}
