//go:build integration

package azurefaults_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #32 on Azurite: what the repair pass and listings conclude from a missing row they
// fence with a conditional write the table service checks, and ages are the service's
// timestamps. The service's clock is real, so these tests wait RepairAfter (a second or two)
// where the in-memory tests advance a fake clock.

const repairAfter = 1500 * time.Millisecond

// serviceWait outlasts repairAfter by the service's clock.
const serviceWait = repairAfter + time.Second

// onHeadBatch returns a store wrapper that calls fn before the first batch writing a run head
// reaches the table (fn may sleep: the batch then lands late).
func onHeadBatch(fn func()) func(engine.Store) engine.Store {
	var once atomic.Bool
	return func(s engine.Store) engine.Store {
		return &enginetest.FaultStore{Store: s, BeforeSubmit: func(ops []engine.Op) error {
			if ops[0].Entity.RowKey == "r" && ops[0].Kind == engine.OpInsert && once.CompareAndSwap(false, true) {
				fn()
			}
			return nil
		}}
	}
}

// onEventBatch is onHeadBatch for the first batch storing a raised event.
func onEventBatch(fn func()) func(engine.Store) engine.Store {
	var once atomic.Bool
	return func(s engine.Store) engine.Store {
		return &enginetest.FaultStore{Store: s, BeforeSubmit: func(ops []engine.Op) error {
			for _, op := range ops {
				if op.Entity.Properties["Type"] == engine.HistoryEventReceived && once.CompareAndSwap(false, true) {
					fn()
				}
			}
			return nil
		}}
	}
}

// failingEnqueues wraps a queue whose enqueues fail while down is set.
func failingEnqueues(down *atomic.Bool) func(engine.WorkQueue) engine.WorkQueue {
	return func(q engine.WorkQueue) engine.WorkQueue {
		return &enginetest.FaultQueue{WorkQueue: q, OnEnqueue: func([]byte) (int, error) {
			if down.Load() {
				return 0, enginetest.ErrInjected
			}
			return 1, nil
		}}
	}
}

// engineOn returns another engine on r's storage (another instance of the app), with clock.
func engineOn(t *testing.T, r *rig, clock func() time.Time) *engine.Engine {
	t.Helper()
	o := r.e.Options()
	e, err := engine.New(engine.Options{Registry: o.Registry, Store: r.store, Queue: r.queue, Payloads: r.payloads,
		Logger: o.Logger, Clock: clock, RepairAfter: repairAfter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// A start whose head batch lands late, a repair pass in between: the claim row the pass
// inserts makes the table refuse the late batch, and the start answers a retryable error; a
// retry of the start (a new nonce, a new claim) runs.
func TestIntegrationFence_LateStartHead(t *testing.T) {
	t.Parallel()
	var r *rig
	r = newRigWrapped(t, engine.Options{RepairAfter: repairAfter}, wrappers{store: onHeadBatch(func() {
		time.Sleep(serviceWait)
		if _, err := r.e.Sweep(context.Background()); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})})
	_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "late", Input: json.RawMessage(pipelineInput)})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("start: %v, want a retryable ErrConflict", err)
	}
	if _, err := r.e.GetRun(t.Context(), "late"); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("GetRun: %v, want not found", err)
	}
	r.assertNoOrphans(t, "late")
	id := r.start(t, "data_pipeline", "late", pipelineInput)
	r.drive(t)
	r.assertPipeline(t, id)
	r.assertNoOrphans(t, id)
}

// heldStore answers the first batch writing a run head with an error without writing it, and
// writes it when land is called: a request the service gets after its caller gave up.
type heldStore struct {
	engine.Store
	held atomic.Pointer[[]engine.Op]
	once atomic.Bool
}

func (s *heldStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	if ops[0].Entity.RowKey == "r" && ops[0].Kind == engine.OpInsert && s.once.CompareAndSwap(false, true) {
		s.held.Store(&ops)
		return nil, enginetest.ErrInjected
	}
	return s.Store.Submit(ctx, ops)
}

// land writes the held batch and returns the table's answer.
func (s *heldStore) land(ctx context.Context) error {
	ops := s.held.Load()
	if ops == nil {
		return errors.New("no batch held")
	}
	_, err := s.Store.Submit(ctx, *ops)
	return err
}

// A start's head batch, answered with an error, still on its way while another start of the
// id runs, finishes and is purged: the repair pass fenced the first start with its claim row,
// which the purge leaves, so the table refuses the batch when it lands.
func TestIntegrationFence_LateStartHeadAfterPurge(t *testing.T) {
	t.Parallel()
	held := &heldStore{}
	r := newRigWrapped(t, engine.Options{RepairAfter: repairAfter}, wrappers{store: func(s engine.Store) engine.Store {
		held.Store = s
		return held
	}})
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "x", Input: json.RawMessage(pipelineInput)}); err == nil {
		t.Fatal("start succeeded")
	}
	id := r.start(t, "data_pipeline", "x", pipelineInput)
	r.drive(t)
	r.assertPipeline(t, id)
	time.Sleep(serviceWait)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if err := held.land(t.Context()); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("the late head batch: %v, want refused by the fence", err)
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("GetRun: %v, want not found", err)
	}
	r.assertNoOrphans(t, id)
}

// An instance whose clock is 2 min ahead runs a repair pass and a listing while a start is
// in flight: by the service's timestamps the start is young, so nothing is fenced or removed.
func TestIntegrationFence_SkewedInstanceLeavesAStartAlone(t *testing.T) {
	t.Parallel()
	var r *rig
	var down atomic.Bool
	down.Store(true)
	r = newRigWrapped(t, engine.Options{RepairAfter: repairAfter}, wrappers{queue: failingEnqueues(&down), store: onHeadBatch(func() {
		ahead := engineOn(t, r, func() time.Time { return time.Now().Add(2 * time.Minute) })
		if n, err := ahead.Sweep(context.Background()); err != nil || n != 0 {
			t.Errorf("skewed sweep: %d dispatched, %v", n, err)
		}
		if _, err := ahead.ListRuns(context.Background(), engine.RunQuery{}); err != nil {
			t.Errorf("skewed listing: %v", err)
		}
	})})
	id := r.start(t, "data_pipeline", "skewed", pipelineInput) // its enqueue fails: left to the repair pass
	down.Store(false)
	time.Sleep(serviceWait)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want the start", n, err)
	}
	r.drive(t)
	r.assertPipeline(t, id)
	r.assertNoOrphans(t, id)
}

// An approval whose batch lands late, its wake-up enqueue failed, a repair pass in between:
// the pass's If-Match merge makes the table refuse the late batch, the raise writes it again
// with a new due row, and the run wakes.
func TestIntegrationFence_LateEventBatch(t *testing.T) {
	t.Parallel()
	var r *rig
	var down, armed atomic.Bool
	r = newRigWrapped(t, engine.Options{RepairAfter: repairAfter}, wrappers{queue: failingEnqueues(&down), store: onEventBatch(func() {
		time.Sleep(serviceWait)
		if _, err := r.e.Sweep(context.Background()); err != nil {
			t.Errorf("sweep: %v", err)
		}
		armed.Store(true)
	})})
	id := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	down.Store(true)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval)); err != nil {
		t.Fatalf("RaiseEvent: %v", err)
	}
	if !armed.Load() {
		t.Fatal("the event batch was never held: the scenario tests nothing")
	}
	down.Store(false)
	time.Sleep(serviceWait)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("repair dispatched %d (err %v), want the woken run", n, err)
	}
	r.drive(t)
	r.assertRun(t, id, engine.StatusCompleted)
	if n := count(r.history(t, id), engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one raise", n)
	}
	r.assertNoOrphans(t, id)
}

// Retention counts from the finish, by the service's timestamps: a run created long before
// the age but finished just now is kept, and purged once it finished long enough ago.
func TestIntegrationRetention_AgeFromTheFinish(t *testing.T) {
	t.Parallel()
	const maxAge = 5 * time.Second // long enough that a loaded machine drives and sweeps within it
	r := newRig(t, engine.Options{Retention: engine.Retention{MaxAge: maxAge}})
	id := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	time.Sleep(maxAge + time.Second) // created past the age, still waiting
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.assertRun(t, id, engine.StatusCompleted) // a client polling for its result finds it
	time.Sleep(maxAge + time.Second)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("finished past the age: %v, want purged", err)
	}
	r.assertNoOrphans(t, id)
}

// A finished run whose index status merges failed stays "active" in the index; the repair
// pass's walk of the active index records its status, and retention purges it.
func TestIntegrationRepair_StaleActiveIndexRowReconciled(t *testing.T) {
	t.Parallel()
	var failMerges atomic.Bool
	failMerges.Store(true)
	r := newRigWrapped(t, engine.Options{Retention: engine.Retention{MaxAge: time.Second}}, wrappers{store: func(s engine.Store) engine.Store {
		return &enginetest.FaultStore{Store: s, BeforeSubmit: func(ops []engine.Op) error {
			if failMerges.Load() && strings.HasPrefix(ops[0].Entity.PartitionKey, "~") && ops[0].Kind == engine.OpMerge {
				return enginetest.ErrInjected
			}
			return nil
		}}
	}})
	id := r.start(t, "data_pipeline", "stale", pipelineInput)
	r.drive(t)
	failMerges.Store(false)
	r.assertRun(t, id, engine.StatusCompleted)
	time.Sleep(2 * time.Second)
	for range 9 { // a round of the walk (every shard), and one pass more
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("finished, stale in the index: %v, want purged", err)
	}
	r.assertNoOrphans(t, id)
}

// A run replaced while blob deletes fail leaves no blob once its id is purged and the repair
// pass has run.
func TestIntegrationPurge_ReplacedRunsBlobsGo(t *testing.T) {
	t.Parallel()
	outage := &enginetest.Outage{Affects: func(op string) bool { return op == enginetest.OpPayloadDelete }}
	r := newRigWrapped(t, engine.Options{RepairAfter: repairAfter}, wrappers{payloads: outage.Payloads})
	big := `{"user_message":"` + strings.Repeat("x", 70<<10) + `"}` // spilled to a blob
	r.start(t, "support_agent", "x", big)
	if err := r.e.CancelRun(t.Context(), "x", "stop"); err != nil {
		t.Fatal(err)
	}
	outage.Begin()
	r.start(t, "support_agent", "x", big) // replaces it; deleting its blobs fails
	outage.End()
	if err := r.e.CancelRun(t.Context(), "x", "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(serviceWait)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, err := r.payloads.DeletePrefix(t.Context(), "x/"); err != nil || n != 0 {
		t.Fatalf("%d blobs of the id left after its purge (err %v)", n, err)
	}
	r.assertNoOrphans(t, "x")
}
