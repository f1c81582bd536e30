package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestEngine_WaitTimeout_FailsOrRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy engine.GraphPolicy
		status engine.RunStatus
		check  func(t *testing.T, run engine.Run)
	}{
		{"fails", engine.GraphPolicy{WaitTimeout: time.Hour}, engine.StatusFailed, func(t *testing.T, run engine.Run) {
			if got := outputString(t, run); got != "orchestrator failed: wait for event 'approval' timed out after 1h0m0s" {
				t.Errorf("output %q", got)
			}
		}},
		{"routes", engine.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "draft_reply"}, engine.StatusCompleted, func(t *testing.T, run engine.Run) {
			if got := stateOf(t, run)["final_response"]; got != "Your request requires manual review before we can proceed." {
				t.Errorf("final_response %v", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var now atomic.Int64
			now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
			clock := func() time.Time { return time.Unix(0, now.Load()) }
			r := newRig(t, engine.Options{Clock: clock, Policies: map[string]engine.GraphPolicy{"support_agent": tt.policy}}, false)
			id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
			r.drive(t) // the wait's timer is a delayed message, invisible until the deadline
			if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
				t.Fatalf("before the deadline: %s", run.RuntimeStatus)
			}
			now.Add(int64(time.Hour + time.Second))
			if n := r.drive(t); n != 1 {
				t.Fatalf("after the deadline %d items were handled, want the timer", n)
			}
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != tt.status {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			tt.check(t, run)
		})
	}
}

func TestEngine_WaitTimeout_EmbeddedTimerFires(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{PollInterval: time.Hour,
		Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: 30 * time.Millisecond, WaitTimeoutNode: "draft_reply"}}}, true)
	run := r.waitFor(t, r.start(t, "support_agent", "", `{"user_message":"refund"}`), func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
}

func TestEngine_EventBeforeTimeout_CancelsTimeout(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: 40 * time.Millisecond}}}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.wait(t, id)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", []byte(`{"approved":true}`)); err != nil {
		t.Fatal(err)
	}
	run := r.waitFor(t, id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	time.Sleep(80 * time.Millisecond) // the timer item arrives and must be dropped as stale
	if again, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted || again.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s then %s", run.RuntimeStatus, again.RuntimeStatus)
	}
}

func TestEngine_RetryPolicy_BacksOffThenSucceedsOrFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		attempts int
		status   engine.RunStatus
		retries  int
	}{
		{"no policy fails at once", 0, engine.StatusFailed, 0},
		{"two attempts not enough", 2, engine.StatusFailed, 1},
		{"three attempts succeed", 3, engine.StatusCompleted, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []durable.StepInfo
			flaky := func(ctx context.Context, s counterState) (any, error) {
				info, _ := durable.StepInfoFrom(ctx)
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, info)
				if len(seen) <= 2 {
					return nil, errors.New("flaky failure")
				}
				return durable.Update{"n": s.N + 1}, nil
			}
			policy := engine.GraphPolicy{Retry: engine.RetryPolicy{MaxAttempts: tt.attempts, InitialBackoff: 5 * time.Millisecond}}
			r := newRig(t, engine.Options{Policies: map[string]engine.GraphPolicy{"flaky": policy}}, true, chainGraph(t, "flaky", 1, flaky))
			id := r.start(t, "flaky", "", `{}`)
			run := r.waitFor(t, id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
			if run.RuntimeStatus != tt.status {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			if tt.status == engine.StatusFailed && outputString(t, run) != "execute_node failed: flaky failure" {
				t.Errorf("output %s", run.Output)
			}
			rows := strings.Join(checkHistory(t, r.history(t, id)), " ")
			if n := strings.Count(rows, engine.HistoryNodeRetryScheduled); n != tt.retries {
				t.Errorf("%d retries in history %s, want %d", n, rows, tt.retries)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, info := range seen {
				if info.RunID != id || info.Step != 1 || info.Attempt != i+1 || info.Nonce == "" || info.IdempotencyKey() != id+":1."+info.Nonce+":1" {
					t.Errorf("attempt %d saw step info %+v", i+1, info)
				}
			}
		})
	}
}

// Issue #10, defect 4.
func TestEngine_WaitTimeoutCommitRacesAcceptedEvent_EventWins(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: time.Hour}}}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	clk.advance(time.Hour + time.Second)
	var raised atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		for _, op := range ops {
			if op.Entity.Properties["Type"] == engine.HistoryRunFailed && raised.CompareAndSwap(false, true) {
				// The client's event is accepted (202) just before the timeout commits.
				return r.e.RaiseEvent(context.Background(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`))
			}
		}
		return nil
	}
	r.drive(t)
	if !raised.Load() {
		t.Fatal("the timeout never tried to commit")
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s: an accepted event lost to the timeout", run.RuntimeStatus, run.Output)
	}
}

// Issue #10, defect 6.
func TestEngine_EarlyWaitTimeoutMessage_ReEnqueuedWithRemainingDelay(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: time.Hour}}}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	// The queue's clock runs ahead of the engine's: the timer arrives half an hour early.
	clk.advance(time.Hour + time.Second)
	msgs, err := r.queue.Receive(t.Context(), 1, time.Minute)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("timer message: %v %v", msgs, err)
	}
	clk.advance(-31 * time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
		t.Fatal(err)
	}
	if err := r.queue.Delete(t.Context(), msgs[0]); err != nil {
		t.Fatal(err)
	}
	clk.advance(31 * time.Minute)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "timed out") {
		t.Fatalf("status %s output %s: the early timer was dropped", run.RuntimeStatus, run.Output)
	}
}

// Issue #10, also measured 3.
func TestEngine_TimeoutAndPoisonFailures_NameTheNode(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var die atomic.Bool
	var entered atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: time.Minute}}}, false,
		dyingGraph(t, &die, &entered))
	timed := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	clk.advance(2 * time.Minute)
	r.drive(t)
	poisoned := r.start(t, "dying", "", `{}`)
	die.Store(true)
	killStep(t, r, clk, poisoned, 5)
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(poisoned, 1, 0), 6); err != nil {
		t.Fatal(err)
	}
	for id, node := range map[string]string{timed: "classify_request", poisoned: "n0"} {
		h := r.history(t, id)
		if last := h[len(h)-1]; last.Type != engine.HistoryRunFailed || last.Node != node {
			t.Errorf("run %s ends with %s at node %q, want run_failed at %q", id, last.Type, last.Node, node)
		}
	}
}
