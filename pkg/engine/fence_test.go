package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #32, finding 1: the repair pass and listings fence a write they conclude will never
// land, and judge ages by the store's clock, never by their own.

// lateStore holds the batches hold picks: their Submit answers an error — an unknown
// outcome, as after a timeout — without writing, and land applies them later, as the service
// applies a request that reached it late: with their conditions checked then. The SDK's retry
// of a batch whose first try landed (FaultStore.LoseReply) is never held: a second copy of a
// write that landed, arriving after its run was purged, is outside what a fence can refuse
// (the run's claim goes with the purge, fence.go).
type lateStore struct {
	engine.Store
	mu     sync.Mutex
	hold   func(ops []engine.Op) bool // guarded by mu
	held   [][]engine.Op              // guarded by mu
	landed *engine.Op                 // the first op of the last batch that went through; guarded by mu
}

func (s *lateStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	s.mu.Lock()
	late := s.hold != nil && s.landed != &ops[0] && s.hold(ops)
	if late {
		cp := make([]engine.Op, len(ops))
		for i, op := range ops {
			op.Entity.Properties = maps.Clone(op.Entity.Properties)
			cp[i] = op
		}
		s.held = append(s.held, cp)
	}
	s.mu.Unlock()
	if late {
		return nil, enginetest.ErrInjected
	}
	etags, err := s.Store.Submit(ctx, ops)
	if err == nil {
		s.mu.Lock()
		s.landed = &ops[0]
		s.mu.Unlock()
	}
	return etags, err
}

// landed is a held batch and what its late landing answered.
type landed struct {
	ops []engine.Op
	err error // nil: it landed
}

// land applies the held batches, oldest first, and returns them with their answers.
func (s *lateStore) land(ctx context.Context) []landed {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	out := make([]landed, len(held))
	for i, ops := range held {
		_, err := s.Store.Submit(ctx, ops)
		out[i] = landed{ops: ops, err: err}
	}
	return out
}

// answers describes what held batches answered when they landed.
func answers(got []landed) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d batches:", len(got))
	for _, l := range got {
		fmt.Fprintf(&b, " %s/%s → %v;", l.ops[0].Entity.PartitionKey, l.ops[0].Entity.RowKey, l.err)
	}
	return b.String()
}

// holds reports whether a held batch matches pick.
func (s *lateStore) holds(pick func(ops []engine.Op) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ops := range s.held {
		if pick(ops) {
			return true
		}
	}
	return false
}

// withLateStore puts a lateStore between r's fault wrapper and its memory store.
func withLateStore(r *rig, hold func(ops []engine.Op) bool) *lateStore {
	s := &lateStore{Store: r.fstore.Store, hold: hold}
	r.fstore.Store = s
	return s
}

// firstOnly wraps a batch predicate so that it picks the first matching batch only.
func firstOnly(pick func(ops []engine.Op) bool) func(ops []engine.Op) bool {
	var done atomic.Bool
	return func(ops []engine.Op) bool { return pick(ops) && done.CompareAndSwap(false, true) }
}

// isEventBatch reports whether a batch stores a raised event.
func isEventBatch(ops []engine.Op) bool {
	for _, op := range ops {
		if op.Entity.Properties["Type"] == engine.HistoryEventReceived {
			return true
		}
	}
	return false
}

// failEnqueues makes the rig's queue refuse enqueues while the returned flag is set.
func failEnqueues(r *rig) *atomic.Bool {
	var down atomic.Bool
	down.Store(true)
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if down.Load() {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	return &down
}

// skewedEngine is a second engine on r's storage whose clock runs ahead by skew: another
// instance of the app, on a host whose clock is off.
func skewedEngine(t *testing.T, r *rig, clk *fakeClock, skew time.Duration, opts engine.Options) *engine.Engine {
	t.Helper()
	opts.Registry, opts.Store, opts.Queue, opts.Payloads, opts.Logger = r.reg, r.fstore, r.fqueue, r.payloads, r.e.Options().Logger
	opts.Clock = func() time.Time { return clk.now().Add(skew) }
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// assertNeverStored checks that no run of id exists, that nothing of it is listed, and that
// no index or due row is left.
func assertNeverStored(t *testing.T, r *rig, id string) {
	t.Helper()
	if run, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("GetRun(%s) = %s, %v: want not found", id, run.RuntimeStatus, err)
	}
	if got := listIDs(t, r, engine.RunQuery{}); len(got) != 0 {
		t.Fatalf("listed: %v", got)
	}
	if n, d := indexRows(t, r, "~"), dueRows(t, r); n != 0 || d != 0 {
		t.Fatalf("%d index rows and %d due rows left", n, d)
	}
}

// assertStartsAgain checks that the id starts afresh after a fence (a new start has a new
// nonce, so the fence claim is not its), completes and is listed.
func assertStartsAgain(t *testing.T, r *rig, id string) {
	t.Helper()
	r.start(t, "data_pipeline", id, pipelineInput)
	r.drive(t)
	assertPipelineDone(t, r, id)
	if got := strings.Join(listIDs(t, r, engine.RunQuery{}), ","); got != id {
		t.Fatalf("listed %q, want %s", got, id)
	}
	assertNoOrphans(t, r, id)
}

// A start whose head batch lands 90 s late, its first enqueue failed, a repair pass in
// between: the pass fences the start (its claim row), the late batch fails against it, and
// the start, reading its claim back, answers a retryable error at once — not 202 for a run
// that cannot exist — also when the pass's removal of its rows fails part-way.
func TestEngine_LateStartHead_RepairPassFences_StartAnswersRetry(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		removalFails bool // the pass fails to delete the start's primary index row
	}{{"rows removed", false}, {"removal fails", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
			down := failEnqueues(r)
			late := firstOnly(isHeadBatch)
			var sweeping atomic.Bool
			var headWrites atomic.Int32
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				if tt.removalFails && sweeping.Load() && ops[0].Kind == engine.OpDelete && strings.HasPrefix(ops[0].Entity.PartitionKey, "~runs-") {
					return enginetest.ErrInjected
				}
				if isHeadBatch(ops) && ops[0].Entity.PartitionKey == "late" {
					headWrites.Add(1)
				}
				if late(ops) {
					clk.advance(90 * time.Second) // the batch is on its way for 90 s
					sweeping.Store(true)
					_, err := r.e.Sweep(context.Background())
					sweeping.Store(false)
					if (err != nil) != tt.removalFails {
						t.Errorf("sweep: %v", err)
					}
				}
				return nil
			}
			_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "late", Input: json.RawMessage(pipelineInput)})
			if err == nil {
				t.Fatal("answered 202 for a start the repair pass settled as never stored")
			}
			if !errors.Is(err, engine.ErrConflict) {
				t.Fatalf("start: %v, want a retryable ErrConflict", err)
			}
			if n := headWrites.Load(); n != 1 {
				t.Fatalf("%d head writes, want the late one only: a fenced start stops", n)
			}
			r.fstore.BeforeSubmit = nil
			down.Store(false)
			clk.advance(2 * time.Minute)
			if _, err := r.e.Sweep(t.Context()); err != nil { // what the first pass left
				t.Fatal(err)
			}
			assertNeverStored(t, r, "late")
			assertStartsAgain(t, r, "late")
		})
	}
}

// A start's head batch, answered with an error, still on its way while another start of the
// id runs, finishes and is purged: the repair pass fences the first start (its claim, not the
// head, which the purge deletes), so its batch landing after the purge fails.
func TestEngine_LateStartHead_AfterAnotherRunOfTheIDWasPurged_Refused(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	ls := withLateStore(r, firstOnly(isHeadBatch))
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "x", Input: json.RawMessage(pipelineInput)}); err == nil {
		t.Fatal("start succeeded")
	}
	clk.advance(time.Second)
	r.start(t, "data_pipeline", "x", pipelineInput)
	r.drive(t)
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil { // the first start's due row: fenced
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := ls.land(t.Context()); len(got) != 1 || !errors.Is(got[0].err, engine.ErrConflict) {
		t.Fatalf("the late head batch: %s, want refused by the fence", answers(got))
	}
	r.drive(t)
	assertNeverStored(t, r, "x")
}

// A start slow before it even wrote its index rows: the repair pass fences it and deletes the
// due row; the start's head batch fails on the fence and it stops — it does not store a run
// whose lost enqueue nothing would repair.
func TestEngine_StartSlowBeforeItsIndexRows_RepairPassFences_StartAnswersRetry(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	down := failEnqueues(r)
	slow := firstOnly(func(ops []engine.Op) bool { return isIndexOp(ops) && ops[0].Kind == engine.OpInsert })
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if slow(ops) {
			clk.advance(90 * time.Second)
			if _, err := r.e.Sweep(context.Background()); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
		return nil
	}
	_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "slow", Input: json.RawMessage(pipelineInput)})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("start: %v, want a retryable ErrConflict", err)
	}
	r.fstore.BeforeSubmit = nil
	down.Store(false)
	assertNeverStored(t, r, "slow")
	assertStartsAgain(t, r, "slow")
}

// The same batch, answered with an error and landing after the repair pass (a request the
// service got late): the fence refuses it, so the error the client got stays true.
func TestEngine_StartHeadLandingAfterItsError_RefusedByTheFence(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	ls := withLateStore(r, firstOnly(isHeadBatch))
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "late", Input: json.RawMessage(pipelineInput)}); err == nil {
		t.Fatal("start succeeded")
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := ls.land(t.Context()); len(got) != 1 || !errors.Is(got[0].err, engine.ErrConflict) {
		t.Fatalf("the late head batch: %s, want refused by the fence", answers(got))
	}
	r.drive(t)
	assertNeverStored(t, r, "late")
	assertStartsAgain(t, r, "late")
}

// A start's late head batch lands just before the repair pass's fence: the fence meets the
// start's own claim, and the pass keeps the start's rows and dispatches it — the run the batch
// stored is listed and completes.
func TestEngine_StartHeadLandingBeforeTheFence_Kept(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	ls := withLateStore(r, firstOnly(isHeadBatch))
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "late", Input: json.RawMessage(pipelineInput)}); err == nil {
		t.Fatal("start succeeded")
	}
	var landed atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if ops[0].Entity.Properties["Fenced"] == true && landed.CompareAndSwap(false, true) {
			if got := ls.land(context.Background()); len(got) != 1 || got[0].err != nil {
				t.Errorf("the late head batch: %s, want it stored", answers(got))
			}
		}
		return nil
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.fstore.BeforeSubmit = nil
	if !landed.Load() {
		t.Fatal("the repair pass never fenced: the scenario tests nothing")
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil { // dispatches the stored start
		t.Fatal(err)
	}
	r.drive(t)
	assertPipelineDone(t, r, "late")
	if got := strings.Join(listIDs(t, r, engine.RunQuery{}), ","); got != "late" {
		t.Fatalf("listed %q, want late", got)
	}
	assertNoOrphans(t, r, "late")
}

// No slowness, but the instance running the repair pass and a listing has a clock 2 min
// ahead: by the store's clock the start is young, so neither fences it nor removes its rows;
// the start answers 202, its lost enqueue is repaired, and the run is listed and purged by
// retention like any other.
func TestEngine_SkewedClock_RepairPassAndListingLeaveAStartInFlight(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute, Retention: engine.Retention{MaxAge: time.Hour}}, false)
	ahead := skewedEngine(t, r, clk, 2*time.Minute, engine.Options{RepairAfter: time.Minute})
	down := failEnqueues(r)
	inFlight := firstOnly(isHeadBatch)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if inFlight(ops) {
			if n, err := ahead.Sweep(context.Background()); err != nil || n != 0 {
				t.Errorf("skewed sweep: %d dispatched, %v", n, err)
			}
			if _, err := ahead.ListRuns(context.Background(), engine.RunQuery{}); err != nil {
				t.Errorf("skewed listing: %v", err)
			}
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "skewed", pipelineInput)
	r.fstore.BeforeSubmit = nil
	down.Store(false)
	if n := indexRows(t, r, "~"); n != 4 {
		t.Fatalf("%d index rows, want the run's 4", n)
	}
	clk.advance(2 * time.Minute)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want the start whose enqueue failed", n, err)
	}
	r.drive(t)
	assertPipelineDone(t, r, id)
	if got := strings.Join(listIDs(t, r, engine.RunQuery{}), ","); got != id {
		t.Fatalf("listed %q, want %s", got, id)
	}
	assertNoOrphans(t, r, id)
	clk.advance(2 * time.Hour)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("retention kept the run: %v", err)
	}
}

// A listing during a start whose head batch is 90 s late fences it before it removes its
// rows: the start answers a retryable error instead of a run that completes unlisted — also
// when the listing's removal of the start's rows fails part-way.
func TestEngine_ListingDuringLateStart_FencesBeforeRemovingRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		removalFails bool // the listing fails to delete the start's primary index row
	}{{"rows removed", false}, {"removal fails", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
			late := firstOnly(isHeadBatch)
			var listing atomic.Bool
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				if tt.removalFails && listing.Load() && ops[0].Kind == engine.OpDelete && strings.HasPrefix(ops[0].Entity.PartitionKey, "~runs-") {
					return enginetest.ErrInjected
				}
				if late(ops) {
					clk.advance(90 * time.Second)
					listing.Store(true)
					if _, err := r.e.ListRuns(context.Background(), engine.RunQuery{}); err != nil {
						t.Errorf("listing: %v", err)
					}
					listing.Store(false)
				}
				return nil
			}
			_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "late", Input: json.RawMessage(pipelineInput)})
			if !errors.Is(err, engine.ErrConflict) {
				t.Fatalf("start: %v, want a retryable ErrConflict", err)
			}
			r.fstore.BeforeSubmit = nil
			clk.advance(2 * time.Minute)
			if _, err := r.e.Sweep(t.Context()); err != nil { // the due row goes too
				t.Fatal(err)
			}
			r.drive(t)
			assertNeverStored(t, r, "late")
			assertStartsAgain(t, r, "late")
		})
	}
}

// An approval whose batch lands late, its wake-up enqueue failed, a repair pass in between:
// the pass fences the head before it drops the event's due row, the late batch fails on the
// ETag, and the raise writes it again with a new due row — the run does not wait forever with
// the event in its inbox.
func TestEngine_LateEventBatch_RepairPassFences_RunWakes(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	down := failEnqueues(r)
	late := firstOnly(isEventBatch)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if late(ops) {
			clk.advance(2 * time.Minute)
			if _, err := r.e.Sweep(context.Background()); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
		return nil
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
		t.Fatalf("RaiseEvent: %v", err)
	}
	r.fstore.BeforeSubmit = nil
	down.Store(false)
	clk.advance(2 * time.Minute)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want the woken run", n, err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one raise", n)
	}
	assertNoOrphans(t, r, id)
}
