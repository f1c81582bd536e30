package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// countRuns lists every run and counts them by status.
func countRuns(t *testing.T, e *engine.Engine) map[engine.RunStatus]int {
	t.Helper()
	out := map[engine.RunStatus]int{}
	q := engine.RunQuery{Limit: 1000}
	for {
		page, err := e.ListRuns(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			out[r.RuntimeStatus]++
		}
		if page.ContinuationToken == "" {
			return out
		}
		q.ContinuationToken = page.ContinuationToken
	}
}

func startFinished(t *testing.T, r *rig, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = r.start(t, "free", fmt.Sprintf("%s-%d", prefix, i), `{}`)
	}
	r.drive(t)
	return ids
}

// TestEngine_Retention_MaxAge_PurgesOldFinishedKeepsUnfinished: a sweep purges the finished
// runs created before the age, and keeps the newer ones and an old run still waiting.
func TestEngine_Retention_MaxAge_PurgesOldFinishedKeepsUnfinished(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxAge: time.Hour}}, false, chainGraph(t, "free", 1, nil))
	old := startFinished(t, r, "old", 12)
	waiting := r.start(t, "support_agent", "waiting", `{"user_message":"refund"}`)
	r.drive(t)
	clock.advance(2 * time.Hour)
	fresh := startFinished(t, r, "fresh", 5)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range old {
		if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("old finished run %s: %v, want purged", id, err)
		}
	}
	for _, id := range append(fresh, waiting) {
		if _, err := r.e.GetRun(t.Context(), id); err != nil {
			t.Errorf("run %s: %v, want kept", id, err)
		}
	}
	if got := countRuns(t, r.e); got[engine.StatusCompleted] != 5 || got[engine.StatusRunning] != 1 {
		t.Errorf("runs left: %v, want 5 completed and 1 running", got)
	}
}

// TestEngine_Retention_PerPass_BoundsOneSweep: one sweep purges at most PerPass runs; the
// next sweeps take the rest.
func TestEngine_Retention_PerPass_BoundsOneSweep(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxAge: time.Minute, PerPass: 3}}, false, chainGraph(t, "free", 1, nil))
	startFinished(t, r, "run", 10)
	clock.advance(time.Hour)
	for _, want := range []int{7, 4, 1, 0, 0} {
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := countRuns(t, r.e)[engine.StatusCompleted]; got != want {
			t.Fatalf("after a sweep: %d runs, want %d", got, want)
		}
	}
}

// TestEngine_Retention_Off_KeepsEverything: the zero Retention purges nothing.
func TestEngine_Retention_Off_KeepsEverything(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now}, false, chainGraph(t, "free", 1, nil))
	startFinished(t, r, "run", 10)
	clock.advance(100000 * time.Hour)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := countRuns(t, r.e)[engine.StatusCompleted]; got != 10 {
		t.Fatalf("%d runs left, want 10", got)
	}
}

// TestEngine_Retention_Validate_RefusesNegative: negative settings are refused by New.
func TestEngine_Retention_Validate_RefusesNegative(t *testing.T) {
	t.Parallel()
	for _, ret := range []engine.Retention{{MaxAge: -1}, {MaxRuns: -1}, {PerPass: -1}} {
		if err := (engine.Options{Retention: ret}).Validate(); err == nil {
			t.Errorf("%+v: no error", ret)
		}
	}
}

// TestEngine_Retention_BoundedLoad_RowCountStable is the bounded load loop: round after
// round of runs started, finished and swept, the store's row count and the payload count
// stay at the bound MaxRuns keeps, not at the runs ever started.
func TestEngine_Retention_BoundedLoad_RowCountStable(t *testing.T) {
	t.Parallel()
	const maxRuns, perRound, rounds = 32, 40, 25
	r := newRig(t, engine.Options{Retention: engine.Retention{MaxRuns: maxRuns, PerPass: 1000}}, false, chainGraph(t, "free", 1, nil))
	waiting := r.start(t, "support_agent", "waiting", `{"user_message":"refund"}`)
	r.drive(t)
	var rows []int
	for round := range rounds {
		startFinished(t, r, fmt.Sprintf("r%d", round), perRound)
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r.store.Len())
		if got := countRuns(t, r.e); got[engine.StatusCompleted] > maxRuns || got[engine.StatusRunning] != 1 {
			t.Fatalf("round %d: runs %v, want at most %d completed and the waiting run", round, got, maxRuns)
		}
	}
	// Every shard holds its quota after a few rounds: from then on the count is flat.
	if first, last := rows[4], rows[rounds-1]; first != last {
		t.Fatalf("row counts per round %v: not stable (%d after round 5, %d at the end)", rows, first, last)
	}
	if rows[rounds-1] > rows[0]+maxRuns*20 {
		t.Fatalf("row counts per round %v: past the bound", rows)
	}
	if _, err := r.e.GetRun(t.Context(), waiting); err != nil {
		t.Fatalf("waiting run: %v", err)
	}
	t.Logf("rows per round: %v (%d runs started)", rows, perRound*rounds+1)
}

// idsInShard returns n run ids, prefix-0, prefix-1, …, skipping those outside index shard
// shard, so that a test can fill one shard.
func idsInShard(prefix string, shard, n int) []string {
	var ids []string
	for i := 0; len(ids) < n; i++ {
		if id := fmt.Sprintf("%s-%d", prefix, i); engine.IndexShard(id) == shard {
			ids = append(ids, id)
		}
	}
	return ids
}

// Issue #32, finding 5: a run that waited two days for its approval is kept MaxAge after it
// finished, not purged the moment it finishes because it was created long ago.
func TestEngine_Retention_MaxAge_CountsFromTheFinish(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxAge: 24 * time.Hour}}, false)
	id := r.start(t, "support_agent", "approved-late", `{"user_message":"refund"}`)
	r.drive(t)
	clock.advance(48 * time.Hour)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	for _, step := range []time.Duration{0, 23 * time.Hour} {
		clock.advance(step)
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := r.e.GetRun(t.Context(), id); err != nil {
			t.Fatalf("%v after it finished: %v, want the result still readable", step, err)
		}
	}
	clock.advance(2 * time.Hour)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("25 h after it finished: %v, want purged", err)
	}
}

// Issue #32, mutation audit 9(b): MaxRuns counts finished runs only. With MaxRuns 8 (one a
// shard), a shard holding three finished runs under three newer waiting ones keeps exactly
// its newest finished run, and every waiting one.
func TestEngine_Retention_MaxRuns_CountsFinishedRunsOnly(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxRuns: 8}}, false, chainGraph(t, "free", 1, nil))
	ids := idsInShard("s", 0, 6)
	finished, waiting := ids[:3], ids[3:]
	for _, id := range finished {
		clock.advance(time.Second)
		r.start(t, "free", id, `{}`)
	}
	for _, id := range waiting {
		clock.advance(time.Second)
		r.start(t, "support_agent", id, `{"user_message":"refund"}`)
	}
	r.drive(t)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, id := range finished {
		_, err := r.e.GetRun(t.Context(), id)
		if newest := i == len(finished)-1; newest && err != nil {
			t.Errorf("newest finished run %s: %v, want kept (waiting runs do not count)", id, err)
		} else if !newest && !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("older finished run %s: %v, want purged", id, err)
		}
	}
	for _, id := range waiting {
		assertStatus(t, r, id, engine.StatusRunning)
	}
}

// Issue #32, mutation audit 9(c): with both a count and an age, the newest runs within the
// count still go once they are older than the age — on the plain store and on the in-memory
// store that accounts runs to owners (what launch builds when both settings are given).
func TestEngine_Retention_CountAndAge_AgePurgesWithinTheCount(t *testing.T) {
	t.Parallel()
	ret := engine.Retention{MaxRuns: 1000, MaxAge: time.Hour, PerPass: 100}
	t.Run("plain store", func(t *testing.T) {
		t.Parallel()
		clock := newFakeClock()
		r := newRig(t, engine.Options{Clock: clock.now, Retention: ret}, false, chainGraph(t, "free", 1, nil))
		ids := startFinished(t, r, "old", 5)
		clock.advance(2 * time.Hour)
		fresh := startFinished(t, r, "fresh", 2)
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
				t.Errorf("run %s finished 2 h ago: %v, want purged although within the count", id, err)
			}
		}
		for _, id := range fresh {
			if _, err := r.e.GetRun(t.Context(), id); err != nil {
				t.Errorf("fresh run %s: %v", id, err)
			}
		}
	})
	t.Run("store accounting runs to owners", func(t *testing.T) {
		t.Parallel()
		clock := newFakeClock()
		r := newBudgetRigClock(t, membudget.Limits{Total: 1 << 30}, ret, clock.now)
		for i := range 5 {
			if err := r.start("alice", "data_pipeline", fmt.Sprintf("old-%d", i), pipelineInput); err != nil {
				t.Fatal(err)
			}
		}
		r.drive(t)
		clock.advance(2 * time.Hour)
		if err := r.start("alice", "data_pipeline", "fresh", pipelineInput); err != nil {
			t.Fatal(err)
		}
		r.drive(t)
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if r.exists(t, fmt.Sprintf("old-%d", i)) {
				t.Errorf("old-%d finished 2 h ago: kept, want purged although within the count", i)
			}
		}
		if !r.exists(t, "fresh") {
			t.Error("fresh run purged")
		}
	})
}
