package engine_test

// Regression tests of issue #10: each names the interleaving it replays and fails on the
// engine before the fix.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// bigInput is an initial state above the inline limit, so the run's input spills.
func bigInput() string {
	b, _ := json.Marshal(map[string]any{"pad": strings.Repeat("p", 40000)})
	return string(b)
}

// isHeadDelete reports whether a batch deletes a run head.
func isHeadDelete(ops []engine.Op) bool {
	return len(ops) == 1 && ops[0].Kind == engine.OpDelete && ops[0].Entity.RowKey == "r"
}

// Defect 1.
func TestEngine_PurgeRacingStartOfSameID_NewRunKeepsItsPayloads(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 1, nil))
	r.start(t, "big", "x", bigInput())
	r.drive(t)
	var restarted atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		// Between the purge's head delete and its payload delete, the id starts again.
		if isHeadDelete(ops) && restarted.CompareAndSwap(false, true) {
			if _, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "big", InstanceID: "x", Input: json.RawMessage(bigInput())}); err != nil {
				t.Errorf("restart: %v", err)
			}
		}
		return nil
	}
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if !restarted.Load() {
		t.Fatal("the purge never deleted the head")
	}
	if _, err := r.e.GetRun(t.Context(), "x"); err != nil {
		t.Fatalf("the new run lost its payloads to the purge: %v", err)
	}
	r.drive(t)
	if run := r.waitFor(t, "x", engine.RunFinished); run.Status != engine.StatusCompleted {
		t.Fatalf("new run: %s %s", run.Status, run.Output)
	}
}

// Defect 2.
func TestEngine_PurgeThenRestart_KeysAndWorkItemsNeverCollide(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 8)
	var visits atomic.Int32
	g := chainGraph(t, "keyed", 1, func(ctx context.Context, s counterState) (any, error) {
		visits.Add(1)
		info, _ := durable.StepInfoFrom(ctx)
		keys <- info.IdempotencyKey()
		return nil, nil
	})
	r := newRig(t, engine.Options{}, false, g)
	var items [][]byte
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		items = append(items, append([]byte(nil), body...))
		return 1, nil
	}
	r.start(t, "keyed", "reused", `{}`)
	oldItem := items[0]
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "reused"); err != nil {
		t.Fatal(err)
	}
	r.start(t, "keyed", "reused", `{}`)
	// A late copy of the purged run's first work item must not drive the new run.
	if err := r.e.HandleWorkItem(t.Context(), oldItem, 1); err != nil {
		t.Fatal(err)
	}
	if run, _ := r.e.GetRun(t.Context(), "reused"); run.Status != engine.StatusPending || visits.Load() != 1 {
		t.Fatalf("the purged run's work item drove the new run: status %s, %d visits", run.Status, visits.Load())
	}
	r.drive(t)
	first, second := <-keys, <-keys
	if first == second {
		t.Fatalf("the purged run and its successor share the idempotency key %q", first)
	}
}

// Defect 3.
func TestEngine_NoETagStore_EventLandsAfterCommit_RunNotStalled(t *testing.T) {
	t.Parallel()
	r := newRigETags(t, false, engine.Options{}, false)
	var raised atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		// Another writer touches the head between the commit and the engine's read-back.
		if commitsNode(ops, "extract") && raised.CompareAndSwap(false, true) {
			return r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "unrelated", json.RawMessage(`1`))
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.Status != engine.StatusCompleted {
		t.Fatalf("status %s: the successful commit was taken for a lost one and the run stalled", run.Status)
	}
}

// Defect 4.
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
	if run.Status != engine.StatusCompleted {
		t.Fatalf("status %s output %s: an accepted event lost to the timeout", run.Status, run.Output)
	}
}

// Defect 5.
func TestEngine_SlowStepLongerThanVisibility_KeptHiddenNotPoisoned(t *testing.T) {
	t.Parallel()
	var entered atomic.Int32
	release := make(chan struct{})
	slow := func(_ context.Context, s counterState) (any, error) {
		entered.Add(1)
		<-release
		return durable.Update{"n": s.N + 1}, nil
	}
	r := newRig(t, engine.Options{VisibilityTimeout: 150 * time.Millisecond, MaxDequeueCount: 2, Concurrency: 3}, true,
		chainGraph(t, "slow", 1, slow))
	id := r.start(t, "slow", "", `{}`)
	time.Sleep(time.Second) // several visibility timeouts
	close(release)
	run := r.waitFor(t, id, engine.RunFinished)
	if run.Status != engine.StatusCompleted || entered.Load() != 1 {
		t.Fatalf("status %s output %s, handler entered %d times: a healthy slow step was redelivered", run.Status, run.Output, entered.Load())
	}
}

// Defect 5, second half: a handling that fails (storage error) is not a death.
func TestEngine_FailedHandlings_DoNotCountTowardsPoison(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{VisibilityTimeout: 100 * time.Millisecond, MaxDequeueCount: 2}, true)
	var fails atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitsNode(ops, "transform") && fails.Add(1) <= 3 {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	if run := r.waitFor(t, id, engine.RunFinished); run.Status != engine.StatusCompleted {
		t.Fatalf("status %s output %s: storage errors were counted as poison deliveries", run.Status, run.Output)
	}
}

// Defect 6.
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
	if run.Status != engine.StatusFailed || !strings.Contains(outputString(t, run), "timed out") {
		t.Fatalf("status %s output %s: the early timer was dropped", run.Status, run.Output)
	}
}

// Defect 7.
func TestEngine_EventStoredWakeEnqueueFails_AcceptedAndRepaired(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	var down atomic.Bool
	down.Store(true)
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if down.Load() {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	approval := json.RawMessage(`{"approved":true,"reviewer":"r"}`)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", approval, engine.WithIdempotencyKey("k1")); err != nil {
		t.Fatalf("a stored event answered %v, want accepted", err)
	}
	// The client did not see the answer and retries with the same key: stored once.
	if err := r.e.RaiseEvent(t.Context(), id, "approval", approval, engine.WithIdempotencyKey("k1")); err != nil {
		t.Fatal(err)
	}
	down.Store(false)
	clk.advance(2 * time.Minute)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want 1", n, err)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.Status != engine.StatusCompleted {
		t.Fatalf("status %s", run.Status)
	}
	if n := strings.Count(strings.Join(checkHistory(t, r.history(t, id)), " "), engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one idempotency key", n)
	}
}

// Defect 8 (engine side; the HTTP side is in runsapi's contract tests).
func TestEngine_BadRunIDs_NotFoundBeforeStorage(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for _, id := range []string{"a/b", `a\b`, "a#b", "a?b", "ctl\x01", strings.Repeat("x", 513)} {
		errs := []error{
			r.e.RaiseEvent(t.Context(), id, "e", nil),
			r.e.CancelRun(t.Context(), id, ""),
			r.e.PurgeRun(t.Context(), id),
		}
		_, err := r.e.History(t.Context(), id, "", 0)
		errs = append(errs, err)
		_, err = r.e.GetRun(t.Context(), id)
		errs = append(errs, err)
		for i, err := range errs {
			if !errors.Is(err, engine.ErrRunNotFound) {
				t.Errorf("id %q, call %d: %v, want ErrRunNotFound", id, i, err)
			}
		}
	}
	if n := r.counts.Table(); n != 0 {
		t.Errorf("%d table operations for ids no run can have", n)
	}
}
