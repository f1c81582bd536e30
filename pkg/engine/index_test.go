package engine_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// listIDs lists every run matching q, following continuation tokens.
func listIDs(t *testing.T, r *rig, q engine.RunQuery) []string {
	t.Helper()
	var ids []string
	for range 100 {
		page, err := r.e.ListRuns(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range page.Runs {
			ids = append(ids, run.InstanceID)
		}
		if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
			return ids
		}
	}
	t.Fatal("list did not end")
	return nil
}

// TestEngine_ListRuns_TouchesNoRunOrHistoryRow: every query a list makes is confined to an
// index partition and its digit row range, so its cost never grows with history.
func TestEngine_ListRuns_TouchesNoRunOrHistoryRow(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for i := range 30 {
		r.start(t, "data_pipeline", fmt.Sprintf("p%02d", i), `{"source_url":"u"}`)
	}
	r.drive(t)
	r.start(t, "support_agent", "s0", `{"user_message":"refund"}`)
	var mu sync.Mutex
	var queries []engine.Query
	r.fstore.BeforeQuery = func(q engine.Query) error {
		mu.Lock()
		defer mu.Unlock()
		queries = append(queries, q)
		return nil
	}
	for _, q := range []engine.RunQuery{{Limit: 7}, {GraphName: "support_agent"}, {Status: engine.StatusCompleted, Limit: 10}, {Status: engine.StatusPending}} {
		listIDs(t, r, q)
	}
	if len(queries) == 0 {
		t.Fatal("no query recorded")
	}
	for _, q := range queries {
		if !strings.HasPrefix(q.PartitionKey, "~") || q.RowKeyFrom < "0" || q.RowKeyTo > ":" || q.RowKeyTo == "" {
			t.Errorf("list query outside the index: %+v", q)
		}
	}
}

func TestEngine_ListRuns_ReplacedAndPurgedRuns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.start(t, "data_pipeline", "x", `{"source_url":"u"}`)
	r.drive(t)
	r.start(t, "data_pipeline", "x", `{"source_url":"v"}`) // replaces the finished run
	if got := listIDs(t, r, engine.RunQuery{}); strings.Join(got, ",") != "x" {
		t.Fatalf("after replace: %v, want [x] once", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Status: engine.StatusCompleted}); len(got) != 0 {
		t.Fatalf("completed runs after replace: %v, want none (the new run is pending)", got)
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "support_agent", InstanceID: "x"}); err == nil {
		t.Fatal("start over an active run succeeded")
	}
	if got := listIDs(t, r, engine.RunQuery{GraphName: "support_agent"}); len(got) != 0 {
		t.Fatalf("a refused start is listed: %v", got)
	}
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, r, engine.RunQuery{}); len(got) != 0 {
		t.Fatalf("after purge: %v", got)
	}
	if n := indexRows(t, r, "~"); n != 0 {
		t.Errorf("%d index rows left", n)
	}
}

// indexRows counts the rows of the index partitions whose key starts with prefix, in every
// shard.
func indexRows(t *testing.T, r *rig, prefix string) int {
	t.Helper()
	return countRows(t, r, func(ent engine.Entity) bool {
		return strings.HasPrefix(ent.PartitionKey, prefix) && ent.RowKey >= "0" && ent.RowKey < ":"
	})
}

// countRows counts the stored rows keep accepts, reading the whole store.
func countRows(t *testing.T, r *rig, keep func(engine.Entity) bool) int {
	t.Helper()
	n := 0
	q := engine.Query{}
	for {
		page, err := r.store.Query(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range page.Entities {
			if keep(ent) {
				n++
			}
		}
		if q.Continuation = page.Continuation; q.Continuation == "" {
			return n
		}
	}
}

// activeRows counts the active index rows of graph ("" for the partitions of all graphs).
func activeRows(t *testing.T, r *rig, graph string) int {
	t.Helper()
	n := 0
	for s := range 8 {
		pk := fmt.Sprintf("~active-%d", s)
		if graph != "" {
			pk += "~" + graph
		}
		page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: pk})
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	return n
}

// TestEngine_ListRuns_RepairsStatusLostByACrash: the index status is written after the
// finishing commit; while that write is lost (a crash, or simply not yet made), a listing by
// the run's finished status still finds the run, by its head, and repairs the row.
func TestEngine_ListRuns_RepairsStatusLostByACrash(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	var failIndex sync.Map
	failIndex.Store("on", true)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if _, on := failIndex.Load("on"); on && ops[0].Kind == engine.OpMerge && strings.HasPrefix(ops[0].Entity.PartitionKey, "~") {
			return enginetest.ErrInjected
		}
		return nil
	}
	r.start(t, "data_pipeline", "c", `{"source_url":"u"}`)
	r.drive(t)
	failIndex.Delete("on")
	stale := func() int {
		return countRows(t, r, func(ent engine.Entity) bool {
			return strings.HasPrefix(ent.PartitionKey, "~") && ent.Properties["RunID"] == "c" && ent.Properties["Status"] == "active"
		})
	}
	if n := stale(); n == 0 {
		t.Fatal("the lost index write left no row marked active: the test sets up nothing")
	}
	for _, q := range []engine.RunQuery{{Status: engine.StatusFailed}, {Status: engine.StatusTerminated}} {
		if got := listIDs(t, r, q); len(got) != 0 {
			t.Fatalf("%s: %v, want none", q.Status, got)
		}
	}
	for _, q := range []engine.RunQuery{{Status: engine.StatusCompleted}, {Status: engine.StatusCompleted, GraphName: "data_pipeline"}} {
		if got := listIDs(t, r, q); strings.Join(got, ",") != "c" {
			t.Fatalf("%+v before repair: %v, want [c]", q, got)
		}
	}
	if n := stale(); n != 0 {
		t.Fatalf("%d index rows still marked active after listings read the head", n)
	}
	if got := listIDs(t, r, engine.RunQuery{Status: engine.StatusCompleted}); strings.Join(got, ",") != "c" {
		t.Fatalf("after repair: %v, want [c]", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Status: engine.StatusRunning}); len(got) != 0 {
		t.Fatalf("running: %v, want none", got)
	}
}

// TestEngine_ListRuns_ActiveIndexHoldsOnlyUnfinishedRuns: a Pending/Running filter reads the
// active partitions, which shrink again as runs finish, so its cost follows the runs in flight.
func TestEngine_ListRuns_ActiveIndexHoldsOnlyUnfinishedRuns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for i := range 5 {
		r.start(t, "data_pipeline", fmt.Sprintf("d%d", i), `{"source_url":"u"}`)
	}
	r.start(t, "support_agent", "w", `{"user_message":"refund"}`)
	if got := listIDs(t, r, engine.RunQuery{Status: engine.StatusPending}); len(got) != 6 {
		t.Fatalf("pending before driving: %v, want 6", got)
	}
	r.drive(t)
	if got := listIDs(t, r, engine.RunQuery{Status: engine.StatusRunning}); strings.Join(got, ",") != "w" {
		t.Fatalf("running: %v, want the waiting run only", got)
	}
	for graph, want := range map[string]int{"": 1, "data_pipeline": 0, "support_agent": 1} {
		if n := activeRows(t, r, graph); n != want {
			t.Errorf("active index of %q holds %d rows, want %d (finished runs leave the active index)", graph, n, want)
		}
	}
}

func TestEngine_ListRuns_FiltersAndPages(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now.Store(base.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Add(int64(time.Second))).UTC() }
	r := newRig(t, engine.Options{Clock: clock}, false)
	for i := range 5 {
		r.start(t, "data_pipeline", fmt.Sprintf("p%d", i), `{"source_url":"u"}`)
	}
	r.drive(t)
	r.start(t, "support_agent", "s0", `{"user_message":"refund"}`)
	r.start(t, "support_agent", "s1", `{"user_message":"refund"}`)

	created := func(id string) time.Time {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return run.CreatedAt
	}
	list := func(q engine.RunQuery) []string {
		var ids []string
		for range 20 {
			page, err := r.e.ListRuns(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for i, run := range page.Runs {
				if i > 0 && run.CreatedAt.After(page.Runs[i-1].CreatedAt) {
					t.Errorf("page not newest first")
				}
				ids = append(ids, run.InstanceID)
			}
			if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
				break
			}
		}
		return ids
	}
	tests := []struct {
		name string
		q    engine.RunQuery
		want int
	}{
		{"all", engine.RunQuery{Limit: 2}, 7},
		{"by graph", engine.RunQuery{GraphName: "support_agent"}, 2},
		{"by status", engine.RunQuery{Status: engine.StatusCompleted, Limit: 3}, 5},
		{"pending", engine.RunQuery{Status: engine.StatusPending}, 2},
		{"created window", engine.RunQuery{CreatedAfter: created("p2"), CreatedBefore: created("p4")}, 2},
	}
	for _, tt := range tests {
		if got := list(tt.q); len(got) != tt.want {
			t.Errorf("%s: %v, want %d runs", tt.name, got, tt.want)
		}
	}
}
