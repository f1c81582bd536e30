package engine_test

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// oldChildHead runs parent id to its end with a child of "kid", keeps the child's head row
// and purges the parent (and so the child): what a child of a purged run of the id looks
// like, naming the parent's id with the purged run's nonce.
func oldChildHead(t *testing.T, r *rig, id string) map[string]any {
	t.Helper()
	startParent(t, r, id, "kid", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	ent, err := r.store.Get(t.Context(), kid, "r")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	return ent.Properties
}

// plantHead writes a head row under id with props, behind the engine's back.
func plantHead(t *testing.T, r *rig, id string, props map[string]any) {
	t.Helper()
	if _, err := r.store.Submit(context.Background(), []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: id, RowKey: "r", Properties: maps.Clone(props)}}}); err != nil {
		t.Fatal(err)
	}
}

// TestEngine_ChildRun_ChildOfAPurgedParentOfTheID_IsNotAdopted: the start of a child that
// meets a head under its id naming its parent's id but another nonce (a child of a purged run
// of the id) neither adopts nor dispatches it: the parent fails, naming the id as taken.
func TestEngine_ChildRun_ChildOfAPurgedParentOfTheID_IsNotAdopted(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	old := oldChildHead(t, r, "p-again")
	old["Status"], old["Runnable"] = string(engine.StatusPending), true
	var planted atomic.Bool
	var kid string
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) && planted.CompareAndSwap(false, true) {
			kid = ops[0].Entity.PartitionKey
			plantHead(t, r, kid, old) // just before the child's start lands
		}
		return nil
	}
	id := startParent(t, r, "p-again", "kid", "kid")
	r.drive(t)
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	if want := "orchestrator failed: cannot start child run: instance id '" + kid + "' is taken by another run"; msg != want {
		t.Fatalf("parent failure %q\nwant %q", msg, want)
	}
	if run := assertStatus(t, r, kid, engine.StatusPending); run.ParentInstanceID != id {
		t.Fatalf("planted run %+v", run)
	}
	if n := countHistory(t, r, kid, engine.HistoryNodeCompleted); n != 0 {
		t.Fatalf("the run under the child's id was dispatched: %d nodes completed", n)
	}
}

// TestEngine_ChildRun_ChildOfAPurgedParentOfTheID_DoesNotResumeTheParent: a parent whose wait
// finds under its child's id a completed run naming its id but another nonce fails, naming the
// id as taken, instead of resuming with that run's state.
func TestEngine_ChildRun_ChildOfAPurgedParentOfTheID_DoesNotResumeTheParent(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	old := oldChildHead(t, r, "p-again")
	// The new run's child start fails: its parent waits for the recheck.
	var failing atomic.Bool
	failing.Store(true)
	var kid string
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if failing.Load() && insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) {
			kid = ops[0].Entity.PartitionKey
			return enginetest.ErrInjected
		}
		return nil
	}
	id := startParent(t, r, "p-again", "kid", "kid")
	r.drive(t)
	failing.Store(false)
	plantHead(t, r, kid, old)
	clk.advance(time.Minute)
	r.drive(t)
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	if want := "orchestrator failed: cannot start child run: instance id '" + kid + "' is taken by another run"; msg != want {
		t.Fatalf("parent failure %q\nwant %q", msg, want)
	}
}

// TestEngine_ChildRun_LostNotice_CostsAboutRepairAfter: a child's notice lost whole (its due
// row too: the worker died before writing anything) is made up for by the parent's recheck
// about RepairAfter after the child ended, not an hour later.
func TestEngine_ChildRun_LostNotice_CostsAboutRepairAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		runs int // minutes the child runs
	}{
		{"a child that ends at once", 0},
		{"a child that runs 3 minutes", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
			const id = "p-silent"
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				for _, op := range ops {
					p := op.Entity.Properties
					if op.Kind == engine.OpInsert && (p["Run"] == id && p["Kind"] == "event" || p["Type"] == engine.HistoryChildFinished) {
						return enginetest.ErrInjected // the notice and its due row
					}
				}
				return nil
			}
			graph := "kid"
			if tt.runs > 0 {
				graph = "kid_wait"
			}
			startParent(t, r, id, graph, "kid")
			r.drive(t)
			kid := kidOf(t, r, id)
			for range tt.runs {
				clk.advance(time.Minute)
				r.drive(t)
			}
			if tt.runs > 0 {
				if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
					t.Fatal(err)
				}
				r.drive(t)
			}
			assertStatus(t, r, kid, engine.StatusCompleted)
			assertStatus(t, r, id, engine.StatusRunning)
			for range 2 {
				clk.advance(time.Minute)
				r.drive(t)
			}
			assertStatus(t, r, id, engine.StatusCompleted)
			if n := countHistory(t, r, id, engine.HistoryChildFinished); n != 0 {
				t.Fatalf("%d notices stored, want none", n)
			}
		})
	}
}

// TestEngine_ChildRun_RecheckThatStartsTheChild_LooksAgainRepairAfterLater: a recheck that
// had to start the child itself looks at it again RepairAfter later, not at once.
func TestEngine_ChildRun_RecheckThatStartsTheChild_LooksAgainRepairAfterLater(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var starts, looks atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) && starts.Add(1) == 1 {
			return enginetest.ErrInjected // the first start fails: the recheck starts the child
		}
		return nil
	}
	r.fstore.BeforeGet = func(pk, rk string) error {
		if rk == "r" && strings.HasPrefix(pk, engine.ChildRunPrefix) {
			looks.Add(1)
		}
		return nil
	}
	id := startParent(t, r, "p-look", "kid_wait", "kid")
	r.drive(t)
	clk.advance(time.Minute)
	r.drive(t)
	kid := kidOf(t, r, id)
	assertStatus(t, r, kid, engine.StatusRunning)
	looks.Store(0)
	for range 59 {
		clk.advance(time.Second)
		r.drive(t)
	}
	if n := looks.Load(); n != 0 {
		t.Fatalf("%d looks at the child within RepairAfter of its start, want none", n)
	}
	clk.advance(time.Second)
	r.drive(t)
	if n := looks.Load(); n != 1 {
		t.Fatalf("%d looks at the child RepairAfter after its start, want 1", n)
	}
}

// TestEngine_ChildRun_NoticeStoredButItsWakeUpLost_RepairPassDispatchesTheParent: a notice
// whose batch landed but whose work item never reached the queue leaves its due row, and the
// repair pass wakes the parent about RepairAfter later, not at its next hourly recheck.
func TestEngine_ChildRun_NoticeStoredButItsWakeUpLost_RepairPassDispatchesTheParent(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	const id = "p-due"
	var armed atomic.Bool
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		if armed.Load() && strings.Contains(string(body), `"run_id":"`+id+`"`) && armed.CompareAndSwap(true, false) {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	startParent(t, r, id, "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	for range 3 { // the child runs three hours: the parent's rechecks are an hour apart by now
		clk.advance(time.Hour)
		r.drive(t)
	}
	armed.Store(true)
	if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if armed.Load() {
		t.Fatal("the parent's wake-up was never enqueued")
	}
	assertStatus(t, r, kid, engine.StatusCompleted)
	assertStatus(t, r, id, engine.StatusRunning)
	if n := countHistory(t, r, id, engine.HistoryChildFinished); n != 1 {
		t.Fatalf("%d notices stored, want 1", n)
	}
	sweepLater(t, r, clk)
	assertStatus(t, r, id, engine.StatusCompleted)
	assertNoOrphans(t, r, id)
}
