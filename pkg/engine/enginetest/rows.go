package enginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// RowsNaming returns the entities outside partition id whose property prop equals id: the
// rows the engine keeps about run id elsewhere — its run-index rows (prop "RunID") and repair
// (due) rows (prop "Run"). It scans the whole table: for tests on small tables.
func RowsNaming(ctx context.Context, store engine.Store, prop, id string) ([]engine.Entity, error) {
	var out []engine.Entity
	q := engine.Query{Where: []engine.Cond{{Property: prop, Op: engine.CondEq, Value: id}}}
	for {
		page, err := store.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, ent := range page.Entities {
			if ent.PartitionKey != id {
				out = append(out, ent)
			}
		}
		if q.Continuation = page.Continuation; q.Continuation == "" {
			return out, nil
		}
	}
}

// CheckNoOrphanRows fails t unless the rows the engine keeps about run id outside its
// partition agree with the run: every run-index row names the stored generation (none once
// the run is purged), a finished run has no index row left saying "active", a listing shows
// the run once (never once purged), and no repair row of it is left. runs is the engine on
// store. It scans the whole table: for tests on small tables, once the run is quiescent.
func CheckNoOrphanRows(t testing.TB, store engine.Store, runs engine.Runs, id string) {
	t.Helper()
	ctx := context.Background()
	head, err := store.Get(ctx, id, "r")
	gone := errors.Is(err, engine.ErrNotFound)
	if err != nil && !gone {
		t.Fatal(err)
	}
	index, err := RowsNaming(ctx, store, "RunID", id)
	if err != nil {
		t.Fatal(err)
	}
	status := head.Properties["Status"]
	for _, row := range index {
		switch {
		case gone:
			t.Errorf("run %s: index row %s/%s of a purged run", id, row.PartitionKey, row.RowKey)
		case row.Properties["Gen"] != head.Properties["Gen"]:
			t.Errorf("run %s: index row %s/%s names generation %v, the run is at %v", id, row.PartitionKey, row.RowKey, row.Properties["Gen"], head.Properties["Gen"])
		case row.Properties["Status"] == "active" && status != string(engine.StatusRunning) && status != string(engine.StatusPending):
			t.Errorf("run %s: index row %s/%s says active, the run is %v", id, row.PartitionKey, row.RowKey, status)
		}
	}
	due, err := RowsNaming(ctx, store, "Run", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Errorf("run %s: %d repair rows left, e.g. %s/%s", id, len(due), due[0].PartitionKey, due[0].RowKey)
	}
	list, err := runs.ListRuns(ctx, engine.RunQuery{Limit: engine.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, run := range list.Runs {
		if run.InstanceID == id {
			listed++
		}
	}
	if want := map[bool]int{true: 0, false: 1}[gone]; listed != want {
		t.Errorf("run %s is listed %d times, want %d", id, listed, want)
	}
}
