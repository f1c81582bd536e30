package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #10, defect 7.
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
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	if n := strings.Count(strings.Join(checkHistory(t, r.history(t, id)), " "), engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one idempotency key", n)
	}
}

// Issue #10, also measured 1: a slow step or a retry back-off is progress, not a lost work item.
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

// Issue #11 "No scans": the repair pass reads due index partitions by row key range, one
// stretch of one active index partition (at most 64 rows, reconcile.go), its own bookkeeping
// rows and the heads of overdue or walked runs, never a history row, and its idle cost does
// not grow with runs.
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
	walked := 0
	for _, q := range rec.queries {
		switch {
		case strings.HasPrefix(q.PartitionKey, "§due-") && q.RowKeyFrom == "" && q.RowKeyTo != "" && len(q.Where) == 0:
		case strings.HasPrefix(q.PartitionKey, "~active-") && !strings.Contains(q.PartitionKey[1:], "~") && q.Limit > 0 && q.Limit <= 64:
			walked++
		default:
			t.Errorf("repair query %+v is neither a due-index range query nor a bounded stretch of the active index", q)
		}
	}
	if walked != 1 {
		t.Errorf("repair walked %d active index partitions, want 1 a pass", walked)
	}
	heads := 0
	for _, rk := range rec.gets {
		switch rk {
		case "r":
			heads++
		case "0clock", "0active": // the store's time, the walk's cursor
		default:
			t.Errorf("repair read row %q, want run heads and its own bookkeeping only", rk)
		}
	}
	if heads < 1 || heads > 1+64 {
		t.Errorf("repair read %d heads, want the lost run's and at most 64 walked", heads)
	}
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), lost); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("repaired run: %s", run.RuntimeStatus)
	}
	rec.queries = nil
	if n, _ := e.Sweep(t.Context()); n != 0 || len(rec.queries) != idle {
		t.Errorf("idle pass: %d dispatched, %d queries (want %d: one per due shard, one of the active index)", n, len(rec.queries), idle)
	}
}

// Issue #32, finding 8: one repair pass settles a bounded number of due rows (32 a shard),
// however many are due; the due index is its own cursor, so the next passes take the rest.
func TestEngine_RepairPass_DueRowsBoundedPerPass(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, chainGraph(t, "free", 1, nil))
	down := failEnqueues(r)
	const runs = 400
	for i := range runs {
		r.start(t, "free", fmt.Sprintf("lost-%d", i), `{}`)
	}
	down.Store(false)
	clk.advance(2 * time.Minute)
	total := 0
	for pass := 0; total < runs; pass++ {
		if pass == 4 {
			t.Fatalf("%d of %d lost starts dispatched after 4 passes", total, runs)
		}
		r.counts.Reset()
		n, err := r.e.Sweep(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n > 8*32 || pass == 0 && n == runs {
			t.Fatalf("pass %d dispatched %d runs, want at most 256", pass, n)
		}
		if q := r.counts.Enqueues.Load(); q > 8*32 {
			t.Fatalf("pass %d enqueued %d items", pass, q)
		}
		total += n
	}
	r.drive(t)
	if got := countRuns(t, r.e)[engine.StatusCompleted]; got != runs {
		t.Fatalf("%d runs completed, want %d", got, runs)
	}
}

// A pass starts no new work past its time budget (always the first unit of each part): with
// the budget spent at once, one pass settles one due row, and a pass with the default budget
// the rest.
func TestEngine_RepairPass_StopsAtItsTimeBudget(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, chainGraph(t, "free", 1, nil))
	down := failEnqueues(r)
	for i := range 20 {
		r.start(t, "free", fmt.Sprintf("lost-%d", i), `{}`)
	}
	down.Store(false)
	clk.advance(2 * time.Minute)
	engine.SetSweepBudget(r.e, 0)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("a pass out of time dispatched %d (err %v), want 1", n, err)
	}
	engine.SetSweepBudget(r.e, time.Hour)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 19 {
		t.Fatalf("the next pass dispatched %d (err %v), want the other 19", n, err)
	}
}
