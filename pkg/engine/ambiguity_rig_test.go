package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// The ambiguity rule's scenarios (ambiguity_test.go) each run twice: the batch's reply is
// lost and the SDK's retry answers (a conflict or not-found of the write's own making), or
// the batch is applied and its answer is an error (a lost reply whose retries failed, a
// timeout, a 500).
type ambiguity struct {
	name string
	// arm installs the fault on r for the batches pick chooses, once armed is set (the first
	// such batch only), and returns how often it fired. meanwhile, if set, runs between the
	// batch and its answer: another writer moving the head before the writer reads it back.
	arm func(r *rig, pick func([]engine.Op) bool, armed *atomic.Bool, meanwhile func([]engine.Op)) *atomic.Int32
}

var ambiguities = []ambiguity{
	{"lost reply, the retry conflicts", func(r *rig, pick func([]engine.Op) bool, armed *atomic.Bool, meanwhile func([]engine.Op)) *atomic.Int32 {
		var n atomic.Int32
		r.fstore.LoseReply = func(ops []engine.Op) bool {
			if armed.Load() && pick(ops) && n.Add(1) == 1 {
				if meanwhile != nil {
					meanwhile(ops)
				}
				return true
			}
			return false
		}
		return &n
	}},
	{"applied, then an error", func(r *rig, pick func([]engine.Op) bool, armed *atomic.Bool, meanwhile func([]engine.Op)) *atomic.Int32 {
		var n atomic.Int32
		r.fstore.AfterSubmit = func(ops []engine.Op) error {
			if armed.Load() && pick(ops) && n.Add(1) == 1 {
				if meanwhile != nil {
					meanwhile(ops)
				}
				return enginetest.ErrInjected
			}
			return nil
		}
		return &n
	}},
}

// forEachAmbiguity runs test once per kind of ambiguous answer. mk builds the test's rig
// (the example graphs, "twice", "big" and "three") with the fault installed for the first
// batch pick chooses after arm is called; forEachAmbiguity then checks that the fault fired.
func forEachAmbiguity(t *testing.T, pick func([]engine.Op) bool, test func(t *testing.T, mk func(engine.Options) *rig, arm func())) {
	t.Helper()
	forEachAmbiguityMeanwhile(t, pick, nil, test)
}

// forEachAmbiguityMeanwhile is forEachAmbiguity with meanwhile(r, ops) run between the
// ambiguous batch and its answer: another writer moves the head before the read-back.
func forEachAmbiguityMeanwhile(t *testing.T, pick func([]engine.Op) bool, meanwhile func(r *rig, ops []engine.Op),
	test func(t *testing.T, mk func(engine.Options) *rig, arm func())) {
	t.Helper()
	for _, a := range ambiguities {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			var armed atomic.Bool
			var fired *atomic.Int32
			var r *rig
			mk := func(opts engine.Options) *rig {
				r = newRig(t, opts, false, twiceGraph(t), chainGraph(t, "big", 1, nil), chainGraph(t, "three", 3, nil))
				var mw func([]engine.Op)
				if meanwhile != nil {
					mw = func(ops []engine.Op) { meanwhile(r, ops) }
				}
				fired = a.arm(r, pick, &armed, mw)
				return r
			}
			test(t, mk, func() { armed.Store(true) })
			if fired == nil || fired.Load() == 0 {
				t.Fatal("the fault never fired: the scenario tests nothing")
			}
		})
	}
}

// Batch pickers.

// insertsHistory picks batches that insert a history row of type typ.
func insertsHistory(typ string) func([]engine.Op) bool {
	return func(ops []engine.Op) bool {
		for _, op := range ops {
			if op.Kind == engine.OpInsert && op.Entity.Properties["Type"] == typ {
				return true
			}
		}
		return false
	}
}

// insertsInbox picks the batch of a raised event (it inserts an inbox row).
func insertsInbox(ops []engine.Op) bool {
	for _, op := range ops {
		if op.Kind == engine.OpInsert && strings.HasPrefix(op.Entity.RowKey, "i") && op.Entity.PartitionKey[0] != '~' {
			return true
		}
	}
	return false
}

// notifies picks the batch of a child's notice to its parent (child_links.go).
func notifies(ops []engine.Op) bool { return insertsHistory(engine.HistoryChildFinished)(ops) }

// beginsRun picks the head merge that makes a Pending run Running (no history row).
func beginsRun(ops []engine.Op) bool {
	return len(ops) == 1 && ops[0].Kind == engine.OpMerge && ops[0].Entity.RowKey == "r" && ops[0].Entity.Properties["Status"] == string(engine.StatusRunning)
}

// deletesHistory picks a batch deleting history or inbox rows (a purge or cleanup).
func deletesHistory(ops []engine.Op) bool {
	return ops[0].Kind == engine.OpDelete && (strings.HasPrefix(ops[0].Entity.RowKey, "h") || strings.HasPrefix(ops[0].Entity.RowKey, "i"))
}

// writesIndex picks the run index's writes (partitions "~…").
func writesIndex(ops []engine.Op) bool { return strings.HasPrefix(ops[0].Entity.PartitionKey, "~") }

// End states.

// countHistory returns how many history rows of a run have type typ.
func countHistory(t testing.TB, r *rig, id, typ string) int {
	t.Helper()
	n := 0
	for _, row := range checkHistory(t, r.history(t, id)) { // gap-free
		if strings.HasPrefix(row, typ+":") {
			n++
		}
	}
	return n
}

// rowsNaming returns the rows outside a run's own partition whose property prop names id.
func rowsNaming(t testing.TB, r *rig, prop, id string) []engine.Entity {
	t.Helper()
	rows, err := enginetest.RowsNaming(context.Background(), r.store, prop, id)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// assertNoOrphans checks the run's index and repair rows (enginetest.CheckNoOrphanRows).
func assertNoOrphans(t testing.TB, r *rig, id string) {
	t.Helper()
	enginetest.CheckNoOrphanRows(t, r.store, r.e, id)
}

// assertStatus checks a run's status.
func assertStatus(t testing.TB, r *rig, id string, want engine.RunStatus) engine.Run {
	t.Helper()
	run, err := r.e.GetRun(context.Background(), id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	if run.RuntimeStatus != want {
		t.Fatalf("run %s is %s (output %s), want %s", id, run.RuntimeStatus, run.Output, want)
	}
	return run
}
