package engine_test

import (
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// A continue-as-new is one batch: its answer lost or wrong, the run still continues exactly
// once per visit that decided it, and goes on.
func TestEngine_ContinueAsNew_AmbiguousCommit_ContinuesOnce(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsHistory(engine.HistoryContinuedAsNew), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		reg := durable.NewRegistry()
		if err := reg.Register(continueGraph(t)); err != nil {
			t.Fatal(err)
		}
		r := mk(engine.Options{Registry: reg})
		id := r.start(t, "cloop", "c1", `{"until":3}`)
		arm() // the first continue's batch
		r.drive(t)
		assertContinuedThrice(t, r, id)
	})
}

// A worker that dies right after the continue-as-new commit landed (its answer an error, the
// read that would settle it failing too) leaves the run in its new generation; the
// redelivered item runs the new generation's entrypoint, a duplicate of the old one does
// nothing, and the run never continues twice.
func TestEngine_ContinueAsNew_CrashAfterTheCommit_RedeliveryGoesOnInTheNewGeneration(t *testing.T) {
	t.Parallel()
	r := continueRig(t, engine.Options{})
	var dead, fired atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryContinuedAsNew)(ops) && fired.CompareAndSwap(false, true) {
			dead.Store(true)
			return enginetest.ErrInjected
		}
		return nil
	}
	r.fstore.BeforeGet = func(string, string) error {
		if dead.CompareAndSwap(true, false) {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t) // the item's handling fails after the commit: the message stays in the queue
	run := assertStatus(t, r, id, engine.StatusRunning)
	if run.Generation != 1 {
		t.Fatalf("after the crash: generation %d, want 1", run.Generation)
	}
	// A first delivery of a passed step is a duplicate: dropped.
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 1); err != nil {
		t.Fatal(err)
	}
	if run := assertStatus(t, r, id, engine.StatusRunning); run.Generation != 1 {
		t.Fatalf("a duplicate moved the run to generation %d", run.Generation)
	}
	// The dead worker's item, redelivered, carries the run's current step.
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 2); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertContinuedThrice(t, r, id)
}

// A continue-as-new whose deletion of older generations fails goes on; the next one deletes
// what it left.
func TestEngine_ContinueAsNew_FailedTrim_LeftToTheNextContinue(t *testing.T) {
	t.Parallel()
	r := continueRig(t, engine.Options{})
	var fired atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if deletesHistory(ops) && fired.Add(1) == 1 {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t)
	if fired.Load() < 2 {
		t.Fatalf("%d trims tried, want the failed one and the next", fired.Load())
	}
	assertContinuedThrice(t, r, id)
}
