package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #32, finding 6: a finished run whose index status merge failed stays "active" in the
// index; the repair pass's walk of the active index records its status within a round of
// passes, and retention then purges it.
func TestEngine_FailedStatusMerge_RepairPassRecordsItAndRetentionPurges(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, Retention: engine.Retention{MaxAge: time.Hour}}, false)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isIndexOp(ops) && ops[0].Kind == engine.OpMerge {
			return enginetest.ErrInjected // the finishing status merge fails
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "stale", pipelineInput)
	r.drive(t)
	r.fstore.BeforeSubmit = nil
	assertStatus(t, r, id, engine.StatusCompleted)
	if n := len(rowsNaming(t, r, "RunID", id)); n != 4 {
		t.Fatalf("%d index rows, want all 4 left active", n)
	}
	clk.advance(48 * time.Hour)
	// One round of the walk (every shard), and one pass more.
	for range 9 {
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("48 h later under 1 h retention: %v, want purged", err)
	}
	if n := len(rowsNaming(t, r, "RunID", id)); n != 0 {
		t.Fatalf("%d index rows left", n)
	}
}

// The walk reads a bounded stretch a pass: with 150 waiting runs in one shard, no pass reads
// more than 64 of their heads, and a run past the first stretch is still reached.
func TestEngine_ActiveIndexWalk_BoundedPerPass(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	ids := idsInShard("w", 0, 150)
	for _, id := range ids {
		clk.advance(time.Millisecond)
		r.start(t, "support_agent", id, `{"user_message":"refund"}`)
	}
	r.drive(t)
	// The oldest run (the last row of its shard, newest first) finishes; its status merge fails.
	oldest := ids[0]
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isIndexOp(ops) && ops[0].Kind == engine.OpMerge {
			return enginetest.ErrInjected
		}
		return nil
	}
	if err := r.e.CancelRun(t.Context(), oldest, "stop"); err != nil {
		t.Fatal(err)
	}
	r.fstore.BeforeSubmit = nil
	active := func() bool {
		for _, row := range rowsNaming(t, r, "RunID", oldest) {
			if strings.HasPrefix(row.PartitionKey, "~active") {
				return true
			}
		}
		return false
	}
	if !active() {
		t.Fatal("the cancelled run left the active index: the scenario tests nothing")
	}
	for pass := range 20 {
		r.counts.Reset()
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if g := r.counts.Gets.Load(); g > 64+3 {
			t.Fatalf("pass %d read %d rows, want at most 64 heads and its bookkeeping", pass, g)
		}
		if !active() {
			if pass < 2 {
				t.Fatalf("reached in pass %d: the stretch is not bounded", pass)
			}
			return
		}
	}
	t.Fatalf("the cancelled run %s is still in the active index after 20 passes", oldest)
}
