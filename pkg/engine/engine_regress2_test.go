package engine_test

// Regression tests of issue #10's "also measured" items, product rules and of the
// recovery design (issue #11: no scans).

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

// Also 1: a slow step or a retry back-off is progress, not a lost work item.
func TestEngine_RepairPass_LeavesSlowStepAndBackoffAlone(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	flaky := func(_ context.Context, s counterState) (any, error) { return nil, errors.New("flaky failure") }
	policy := engine.GraphPolicy{Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Hour}}
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"flaky": policy}}, false,
		chainGraph(t, "flaky", 1, flaky))
	backoff := r.start(t, "flaky", "", `{}`)
	r.drive(t) // attempt 1 fails; the retry is a delayed message
	slow := r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
	msgs, err := r.queue.Receive(t.Context(), 1, 24*time.Hour) // a worker holds the slow run's item
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v %v", msgs, err)
	}
	for range 20 { // ten simulated minutes of repair passes
		clk.advance(30 * time.Second)
		if n, err := r.e.Sweep(t.Context()); err != nil || n != 0 {
			t.Fatalf("repair dispatched %d runs (err %v): progressing runs were re-dispatched", n, err)
		}
	}
	if n := r.queue.Len(); n != 2 {
		t.Fatalf("%d messages queued, want the held item and the retry timer", n)
	}
	_, _ = backoff, slow
}

// Also 2: a route whose event name cannot be stored fails the run at once.
func TestEngine_RouteEventNameTooLargeForProperty_FailsOnFirstAttempt(t *testing.T) {
	t.Parallel()
	var routes atomic.Int32
	b := durable.NewManifestBuilder[counterState]("huge")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", incr, durable.WithHandlerName("test.huge.a"), durable.WithRouteName("test.huge.route"),
		durable.WithRoute(func(context.Context, counterState) (any, error) {
			routes.Add(1)
			return durable.WaitForEvent(strings.Repeat("e", 40000), "b"), nil
		}))
	_ = b.AddNode("b", incr, durable.WithHandlerName("test.huge.b"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "huge", "", `{}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.Status != engine.StatusFailed || !strings.HasPrefix(outputString(t, run), "orchestrator failed: step result too large to store: ") || routes.Load() != 1 {
		t.Fatalf("status %s output %s after %d route runs, want a clear failure on the first", run.Status, run.Output, routes.Load())
	}
}

// Also 3.
func TestEngine_TimeoutAndPoisonFailures_NameTheNode(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: time.Minute}}}, false)
	timed := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	clk.advance(2 * time.Minute)
	r.drive(t)
	poisoned := r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(poisoned, 1, 0), 5); err != nil {
		t.Fatal(err)
	}
	for id, node := range map[string]string{timed: "classify_request", poisoned: "extract"} {
		h := r.history(t, id)
		if last := h[len(h)-1]; last.Type != engine.HistoryRunFailed || last.Node != node {
			t.Errorf("run %s ends with %s at node %q, want run_failed at %q", id, last.Type, last.Node, node)
		}
	}
}

// Also 4: payloads of rebased and dropped commits are not left behind.
func TestEngine_RebasedAndDroppedCommits_LeaveNoOrphanPayloads(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("q", 40000)
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	big := func(ctx context.Context, s counterState) (any, error) {
		if s.Limit == 1 { // the run that gets cancelled mid-step
			once.Do(func() { close(inside); <-release })
		}
		return durable.Update{"n": s.N + 1, "pad": pad + strings.Repeat("x", s.N)}, nil
	}
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 3, big))
	var raised atomic.Bool
	rebased := r.start(t, "big", "", `{}`)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if ops[0].Entity.PartitionKey == rebased && commitsNode(ops, "n1") && raised.CompareAndSwap(false, true) {
			return r.e.RaiseEvent(context.Background(), rebased, "noise", json.RawMessage(`1`)) // forces a rebase
		}
		return nil
	}
	r.drive(t)
	cancelled := r.start(t, "big", "", `{"limit":1}`)
	done := make(chan struct{})
	go func() { defer close(done); r.drive(t) }()
	<-inside
	// Cancelled and purged while its step runs: the late worker's commit finds no head.
	if err := r.e.CancelRun(t.Context(), cancelled, "stop"); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), cancelled); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	if !raised.Load() {
		t.Fatal("no rebase happened")
	}
	// Every stored payload is referenced by a row of the one remaining run.
	refs := map[string]bool{}
	page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: rebased})
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range page.Entities {
		for name, v := range ent.Properties {
			if s, ok := v.(string); ok && strings.HasSuffix(name, "Ref") && s != "" {
				refs[s] = true
			}
		}
	}
	if n := r.payloads.Len(); n != len(refs) {
		t.Fatalf("%d payloads stored, %d referenced: orphans of a rebase or a late worker", n, len(refs))
	}
}

// Product rule: a non-empty event body that is not JSON is refused and nothing is stored.
func TestEngine_RaiseEvent_NonJSONPayloadRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": tr`)); !errors.Is(err, engine.ErrInvalidEventPayload) {
		t.Fatalf("truncated payload: %v, want ErrInvalidEventPayload", err)
	}
	if strings.Contains(strings.Join(checkHistory(t, r.history(t, id)), " "), engine.HistoryEventReceived) {
		t.Fatal("a refused event was stored")
	}
	if err := r.e.RaiseEvent(t.Context(), id, "other", nil); err != nil { // empty still means null
		t.Fatal(err)
	}
}

// Product rule: WaitRun waits for a finished run unless told to stop at a wait.
func TestEngine_WaitRun_DefaultWaitsForFinished(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	if run := r.waitFor(t, id, engine.RunSettled); run.Status != engine.StatusRunning {
		t.Fatalf("settled at %s, want Running (waiting)", run.Status)
	}
	// Nothing wakes the run: WaitRun(nil) must keep waiting until its context ends.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if run, err := r.e.WaitRun(ctx, id, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRun(nil) returned a %s run (err %v) while the run waits for an event", run.Status, err)
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true}`)); err != nil {
		t.Fatal(err)
	}
	if run := r.waitFor(t, id, nil); run.Status != engine.StatusCompleted {
		t.Fatalf("WaitRun(nil) returned a %s run, want the finished one", run.Status)
	}
}

// recordingStore records every Query and every key read by Get.
type recordingStore struct {
	engine.Store
	mu      sync.Mutex
	queries []engine.Query
	gets    []string
}

func (s *recordingStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	return s.Store.Query(ctx, q)
}

func (s *recordingStore) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	s.mu.Lock()
	s.gets = append(s.gets, rk)
	s.mu.Unlock()
	return s.Store.Get(ctx, pk, rk)
}

// Issue #11 "No scans": the repair pass reads due index partitions by row key range and the
// heads of overdue runs, never a history row, and its idle cost does not grow with runs.
func TestEngine_RepairPass_TouchesNoHistoryRow(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	for range 30 {
		r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
		r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	}
	r.drive(t)
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 0, errors.New("queue down") }
	lost := r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
	r.fqueue.OnEnqueue = nil
	clk.advance(time.Hour)
	rec := &recordingStore{Store: r.store}
	e, err := engine.New(engine.Options{Registry: r.reg, Store: rec, Queue: r.queue, Payloads: r.payloads, Clock: clk.now, Logger: r.e.Options().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want the lost start", n, err)
	}
	idle := len(rec.queries)
	for _, q := range rec.queries {
		if !strings.HasPrefix(q.PartitionKey, "§due-") || q.RowKeyFrom != "" || q.RowKeyTo == "" || len(q.Where) != 0 {
			t.Errorf("repair query %+v is not a due-index range query", q)
		}
	}
	for _, rk := range rec.gets {
		if rk != "r" {
			t.Errorf("repair read row %q, want run heads only", rk)
		}
	}
	if len(rec.gets) != 1 {
		t.Errorf("repair read %d heads, want the lost run's only", len(rec.gets))
	}
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), lost); run.Status != engine.StatusCompleted {
		t.Fatalf("repaired run: %s", run.Status)
	}
	rec.queries = nil
	if n, _ := e.Sweep(t.Context()); n != 0 || len(rec.queries) != idle {
		t.Errorf("idle pass: %d dispatched, %d queries (want %d, one per due shard)", n, len(rec.queries), idle)
	}
}
