package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// startIn starts a run of graph in group.
func (r *rig) startIn(t *testing.T, graph, id, group, input string) {
	t.Helper()
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: graph, InstanceID: id, Group: group, Input: []byte(input)}); err != nil {
		t.Fatalf("StartRun(%s in %s): %v", id, group, err)
	}
}

// groupRows counts the rows of a group's partitions: every run, and the unfinished ones.
func groupRows(t *testing.T, r *rig, group string) (all, active int) {
	t.Helper()
	return indexRows(t, r, "~group~"+group), indexRows(t, r, "~gactive~"+group)
}

// TestEngine_ListRuns_Group: a group lists its own runs only, newest first (every filter
// kept), its unfinished runs oldest first, and its rows follow the run's lifecycle.
func TestEngine_ListRuns_Group(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	var g, waiting []string
	for i := range 12 {
		id := fmt.Sprintf("g%02d", i)
		if i%3 == 0 {
			r.startIn(t, "support_agent", id, "thread-1", `{"user_message":"refund"}`)
			waiting = append(waiting, id)
		} else {
			r.startIn(t, "data_pipeline", id, "thread-1", `{"source_url":"u"}`)
		}
		g = append(g, id)
		r.startIn(t, "data_pipeline", fmt.Sprintf("o%02d", i), "thread-2", `{"source_url":"u"}`)
		r.start(t, "support_agent", fmt.Sprintf("n%02d", i), `{"user_message":"refund"}`)
	}
	r.drive(t)
	r.startIn(t, "data_pipeline", "pending", "thread-1", `{"source_url":"u"}`)
	g = append(g, "pending")
	newestFirst := func(ids []string) []string {
		out := slices.Clone(ids)
		slices.Reverse(out)
		return out
	}
	created := func(id string) time.Time {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Group != "thread-1" {
			t.Fatalf("run %s has group %q", id, run.Group)
		}
		return run.CreatedAt
	}
	finished := slices.DeleteFunc(slices.Clone(g), func(id string) bool { return slices.Contains(waiting, id) || id == "pending" })
	unfinished := append(slices.Clone(waiting), "pending")
	tests := []struct {
		name string
		q    engine.RunQuery
		want []string
	}{
		{"all", engine.RunQuery{}, newestFirst(g)},
		{"completed", engine.RunQuery{Status: engine.StatusCompleted}, newestFirst(finished)},
		{"graph", engine.RunQuery{GraphName: "support_agent"}, newestFirst(waiting)},
		{"unfinished", engine.RunQuery{Unfinished: true}, newestFirst(unfinished)},
		{"running", engine.RunQuery{Status: engine.StatusRunning}, newestFirst(waiting)},
		{"unfinished, oldest first", engine.RunQuery{Unfinished: true, OldestFirst: true}, unfinished},
		{"pending, oldest first", engine.RunQuery{Status: engine.StatusPending, OldestFirst: true}, []string{"pending"}},
		{"created window", engine.RunQuery{CreatedAfter: created("g03"), CreatedBefore: created("g09")}, newestFirst(g[3:9])},
		{"created window, oldest first", engine.RunQuery{Unfinished: true, OldestFirst: true, CreatedAfter: created("g03"), CreatedBefore: created("g09")}, []string{"g03", "g06"}},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 2, 100} {
			q := tt.q
			q.Group, q.Limit = "thread-1", limit
			if got := listIDs(t, r, q); !slices.Equal(got, tt.want) {
				t.Errorf("%s, limit %d:\n got %v\nwant %v", tt.name, limit, got, tt.want)
			}
		}
	}
	if got := listIDs(t, r, engine.RunQuery{Group: "nobody"}); len(got) != 0 {
		t.Errorf("a group without runs lists %v", got)
	}
	if all, active := groupRows(t, r, "thread-1"); all != 13 || active != 5 {
		t.Errorf("group rows: %d, %d active; want 13, 5 (finished runs leave the active partition)", all, active)
	}
	// Finishing, purging and replacing keep the group's partitions in step.
	if err := r.e.CancelRun(t.Context(), "g00", "done"); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), "g01"); err != nil {
		t.Fatal(err)
	}
	r.startIn(t, "data_pipeline", "g02", "thread-3", `{"source_url":"u"}`) // replaces g02 in another group
	if all, active := groupRows(t, r, "thread-1"); all != 11 || active != 4 {
		t.Errorf("group rows after cancel, purge, replace: %d, %d active; want 11, 4", all, active)
	}
	if got := listIDs(t, r, engine.RunQuery{Group: "thread-3"}); !slices.Equal(got, []string{"g02"}) {
		t.Errorf("the replacing group lists %v", got)
	}
}

// TestEngine_ListRuns_GroupCostsWhatItReturns: among many runs of other groups, a page of one
// group's newest runs costs one query and one head read per run, and its oldest unfinished
// run one query and one head read; no other partition is read.
func TestEngine_ListRuns_GroupCostsWhatItReturns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	for i := range 150 {
		r.startIn(t, "support_agent", fmt.Sprintf("other-%03d", i), fmt.Sprintf("t%d", i%3), `{"user_message":"refund"}`)
		if i%30 == 0 {
			r.startIn(t, "support_agent", fmt.Sprintf("mine-%03d", i), "mine", `{"user_message":"refund"}`)
		}
	}
	r.drive(t)
	var partitions []string
	r.fstore.BeforeQuery = func(q engine.Query) error {
		partitions = append(partitions, q.PartitionKey)
		return nil
	}
	for _, tt := range []struct {
		name      string
		q         engine.RunQuery
		want      string
		partition string
	}{
		{"newest 2", engine.RunQuery{Group: "mine", Limit: 2}, "mine-120,mine-090", "~group~mine"},
		{"oldest unfinished", engine.RunQuery{Group: "mine", Unfinished: true, OldestFirst: true, Limit: 1}, "mine-000", "~gactive~mine"},
	} {
		partitions = nil
		r.counts.Reset()
		page, err := r.e.ListRuns(t.Context(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, run := range page.Runs {
			ids = append(ids, run.InstanceID)
		}
		if got := strings.Join(ids, ","); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
		n := int64(len(ids))
		if q, g, s := r.counts.Queries.Load(), r.counts.Gets.Load(), r.counts.Submits.Load(); q != 1 || g != n || s != 0 {
			t.Errorf("%s: %d queries, %d reads, %d writes; want 1, %d, 0", tt.name, q, g, s, n)
		}
		if !slices.Equal(partitions, []string{tt.partition}) {
			t.Errorf("%s read partitions %v, want [%s]", tt.name, partitions, tt.partition)
		}
	}
}

// TestEngine_Group_Refused: a group outside ValidGroup fails the start before anything is
// stored and lists nothing, and OldestFirst needs a group's unfinished runs.
func TestEngine_Group_Refused(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for _, g := range []string{"a/b", "..", strings.Repeat("x", 257), "tab\t"} {
		r.counts.Reset()
		_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "x", Group: g, Input: []byte(`{"source_url":"u"}`)})
		if !errors.Is(err, engine.ErrInvalidGroup) || r.counts.Table() != 0 {
			t.Errorf("group %q: %v after %d operations, want ErrInvalidGroup before any", g, err, r.counts.Table())
		}
		page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Group: g})
		if err != nil || len(page.Runs) != 0 || r.counts.Table() != 0 {
			t.Errorf("list group %q: %v %v after %d operations", g, page.Runs, err, r.counts.Table())
		}
	}
	for _, q := range []engine.RunQuery{
		{OldestFirst: true, Unfinished: true},
		{Group: "g", OldestFirst: true},
		{Group: "g", OldestFirst: true, Status: engine.StatusCompleted},
		{Unfinished: true, Status: engine.StatusRunning},
	} {
		if _, err := r.e.ListRuns(t.Context(), q); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Errorf("%+v: %v, want ErrInvalidQuery", q, err)
		}
	}
	if _, err := r.e.ListRuns(t.Context(), engine.RunQuery{Group: "g", ContinuationToken: "bm90IGEgdG9rZW4"}); !errors.Is(err, engine.ErrInvalidQuery) {
		t.Errorf("bad token: %v", err)
	}
}

// TestEngine_Group_FailedStartAndOrphans: a failed start removes its group rows, and a
// listing of the group removes those of a start that never stored its head once they are old.
func TestEngine_Group_FailedStartAndOrphans(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isHeadBatch(ops) && ops[0].Entity.PartitionKey == "refused" {
			return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
		}
		if isIndexOp(ops) && ops[0].Kind == engine.OpDelete {
			return enginetest.ErrInjected // the failed start cannot clean up
		}
		return nil
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "refused", Group: "g", Input: []byte(`{"source_url":"u"}`)}); err == nil {
		t.Fatal("start succeeded")
	}
	r.fstore.BeforeSubmit = nil
	r.startIn(t, "support_agent", "live", "g", `{"user_message":"refund"}`)
	if all, active := groupRows(t, r, "g"); all != 2 || active != 2 {
		t.Fatalf("group rows %d, %d active; want the orphan's and the live run's", all, active)
	}
	clk.advance(2 * time.Minute)
	for _, q := range []engine.RunQuery{{Group: "g"}, {Group: "g", Unfinished: true, OldestFirst: true}} {
		if got := listIDs(t, r, q); !slices.Equal(got, []string{"live"}) {
			t.Fatalf("%+v lists %v", q, got)
		}
	}
	if all, active := groupRows(t, r, "g"); all != 1 || active != 1 {
		t.Errorf("group rows after the listings: %d, %d active; want the live run's only", all, active)
	}
	if n := indexRows(t, r, "~"); n != 6 {
		t.Errorf("%d index rows, want the live run's 6 (orphan's removed from every family)", n)
	}
}
