package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// dueRows counts the rows of the repair (due) index.
func dueRows(t *testing.T, r *rig) int {
	t.Helper()
	return countRows(t, r, func(ent engine.Entity) bool { return strings.HasPrefix(ent.PartitionKey, "§due-") })
}

// isIndexOp reports whether a batch writes the run index.
func isIndexOp(ops []engine.Op) bool { return strings.HasPrefix(ops[0].Entity.PartitionKey, "~") }

// isHeadBatch reports whether a batch writes a run head.
func isHeadBatch(ops []engine.Op) bool { return ops[0].Entity.RowKey == "r" }

// TestEngine_FailedStart_LeavesNoIndexOrDueRows: a start that fails — its head batch refused,
// or one of its index inserts failing — removes its index and due rows at once, so no listing
// pays a head read for it.
func TestEngine_FailedStart_LeavesNoIndexOrDueRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		fail func(ops []engine.Op, n int64) error
	}{
		{"head batch refused", func(ops []engine.Op, _ int64) error {
			if isHeadBatch(ops) {
				return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
			}
			return nil
		}},
		{"third index insert fails", func(ops []engine.Op, n int64) error {
			if isIndexOp(ops) && ops[0].Kind == engine.OpInsert && n == 3 {
				return enginetest.ErrInjected
			}
			return nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false)
			var indexOps atomic.Int64
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				n := int64(0)
				if isIndexOp(ops) && ops[0].Kind == engine.OpInsert {
					n = indexOps.Add(1)
				}
				return tt.fail(ops, n)
			}
			if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "f", Input: []byte(`{"source_url":"u"}`)}); err == nil {
				t.Fatal("start succeeded")
			}
			r.fstore.BeforeSubmit = nil
			if n := indexRows(t, r, "~"); n != 0 {
				t.Errorf("%d index rows left by a failed start", n)
			}
			if n := dueRows(t, r); n != 0 {
				t.Errorf("%d due rows left by a failed start", n)
			}
		})
	}
}

// TestEngine_StartOfUnknownOutcome_RepairPassRemovesItsRows: a head batch whose outcome is
// unknown leaves the start's rows to the repair pass; the rows are never listed, and the
// pass removes them (with the due row) when the head never landed.
func TestEngine_StartOfUnknownOutcome_RepairPassRemovesItsRows(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isHeadBatch(ops) {
			return enginetest.ErrInjected // not a refusal: the batch may have landed
		}
		return nil
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "u", Input: []byte(`{"source_url":"u"}`)}); err == nil {
		t.Fatal("start succeeded")
	}
	r.fstore.BeforeSubmit = nil
	if got := listIDs(t, r, engine.RunQuery{}); len(got) != 0 {
		t.Fatalf("a start that stored no head is listed: %v", got)
	}
	if n := indexRows(t, r, "~"); n != 4 {
		t.Fatalf("%d index rows, want the start's 4 until the repair pass settles it", n)
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, d := indexRows(t, r, "~"), dueRows(t, r); n != 0 || d != 0 {
		t.Fatalf("after the repair pass: %d index rows and %d due rows, want none", n, d)
	}
}

// TestEngine_ListRuns_RemovesOrphanRowsOnceOld: index rows whose head is missing (a start
// whose clean-up failed, a purge interrupted) or is another generation (a replacement whose
// clean-up failed) are not listed, and a listing removes them once they are older than
// RepairAfter — not before, while their start may still be storing its head.
func TestEngine_ListRuns_RemovesOrphanRowsOnceOld(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	r.start(t, "data_pipeline", "kept", `{"source_url":"u"}`)
	r.start(t, "data_pipeline", "replaced", `{"source_url":"u"}`)
	r.drive(t)
	var failIndexDeletes atomic.Bool
	failIndexDeletes.Store(true)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		switch {
		case failIndexDeletes.Load() && isIndexOp(ops) && ops[0].Kind == engine.OpDelete:
			return enginetest.ErrInjected
		case isHeadBatch(ops) && ops[0].Entity.PartitionKey == "gone":
			return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
		}
		return nil
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "gone", Input: []byte(`{"source_url":"u"}`)}); err == nil {
		t.Fatal("start succeeded")
	}
	clk.advance(time.Second)
	r.start(t, "support_agent", "replaced", `{"user_message":"hi"}`) // the old rows stay: deletes fail
	failIndexDeletes.Store(false)
	r.fstore.BeforeSubmit = nil
	before := indexRows(t, r, "~")
	if got := strings.Join(listIDs(t, r, engine.RunQuery{}), ","); got != "replaced,kept" {
		t.Fatalf("list = %s, want replaced,kept", got)
	}
	if n := indexRows(t, r, "~"); n != before {
		t.Fatalf("a listing removed rows younger than RepairAfter: %d → %d", before, n)
	}
	clk.advance(2 * time.Minute)
	for _, q := range []engine.RunQuery{{}, {GraphName: "data_pipeline"}, {Status: engine.StatusPending}} {
		listIDs(t, r, q)
	}
	// kept: 2 rows (finished); replaced: 4 (Pending, not driven).
	if n := indexRows(t, r, "~"); n != 6 {
		t.Fatalf("%d index rows after the listings, want 6 (the orphans removed)", n)
	}
	r.counts.Reset()
	if got := strings.Join(listIDs(t, r, engine.RunQuery{}), ","); got != "replaced,kept" {
		t.Fatalf("list = %s", got)
	}
	if g := r.counts.Gets.Load(); g != 2 {
		t.Errorf("a listing read %d heads, want 2: no orphan left to read", g)
	}
}

// TestEngine_ListRuns_RowOfStartInFlight_NotRemoved: the index rows of a start whose head is
// not stored yet are neither listed nor removed.
func TestEngine_ListRuns_RowOfStartInFlight_NotRemoved(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	listed := make(chan []string, 1)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isHeadBatch(ops) && len(listed) == 0 {
			clk.advance(30 * time.Second) // a slow start
			listed <- listIDs(t, r, engine.RunQuery{})
		}
		return nil
	}
	r.start(t, "data_pipeline", "slow", `{"source_url":"u"}`)
	if got := <-listed; len(got) != 0 {
		t.Fatalf("listed before its head was stored: %v", got)
	}
	if got := listIDs(t, r, engine.RunQuery{}); strings.Join(got, ",") != "slow" {
		t.Fatalf("after the start: %v, want [slow]", got)
	}
	if _, err := r.e.GetRun(t.Context(), "slow"); errors.Is(err, engine.ErrRunNotFound) {
		t.Fatal("run not stored")
	}
}
