package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
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
			out[r.Status]++
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
