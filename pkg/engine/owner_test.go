package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// startAs starts a run of graph whose metadata names owner ("" none), in group ("" none).
func (r *rig) startAs(t *testing.T, graph, id, owner, group, input string) {
	t.Helper()
	meta := ""
	if owner != "" {
		meta = fmt.Sprintf(`{"k":1,"owner":%q}`, owner)
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: graph, InstanceID: id, Group: group, Input: []byte(input), Metadata: []byte(meta)}); err != nil {
		t.Fatalf("StartRun(%s as %q): %v", id, owner, err)
	}
}

// ownerPartitions returns the index partitions of owner: every run, and the unfinished ones.
func ownerPartitions(owner string) (all, active string) {
	sum := sha256.Sum256([]byte(owner))
	h := hex.EncodeToString(sum[:16])
	return "~owner~" + h, "~oactive~" + h
}

// ownerRows counts the rows of an owner's partitions: every run, and the unfinished ones.
func ownerRows(t *testing.T, r *rig, owner string) (all, active int) {
	t.Helper()
	a, act := ownerPartitions(owner)
	return indexRows(t, r, a), indexRows(t, r, act)
}

const (
	support  = `{"user_message":"refund"}`
	pipeline = `{"source_url":"u"}`
)

// TestEngine_ListRuns_Owner: an owner lists their own runs only, newest first, with every
// filter and page size; an owner without runs gets an empty page without a token; the rows
// follow the run's lifecycle, and a run moves to the owner of the run that replaces it.
func TestEngine_ListRuns_Owner(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	var mine, waiting []string
	for i := range 12 {
		id := fmt.Sprintf("a%02d", i)
		if i%3 == 0 {
			r.startAs(t, "support_agent", id, "alice", "", support)
			waiting = append(waiting, id)
		} else {
			r.startAs(t, "data_pipeline", id, "alice", "", pipeline)
		}
		mine = append(mine, id)
		r.startAs(t, "support_agent", fmt.Sprintf("b%02d", i), "bob", "", support)
		r.startAs(t, "support_agent", fmt.Sprintf("n%02d", i), "", "", support)
	}
	r.drive(t)
	r.startAs(t, "data_pipeline", "pending", "alice", "", pipeline)
	mine = append(mine, "pending")
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
		return run.CreatedAt
	}
	finished := slices.DeleteFunc(slices.Clone(mine), func(id string) bool { return slices.Contains(waiting, id) || id == "pending" })
	unfinished := append(slices.Clone(waiting), "pending")
	for _, tt := range []struct {
		name string
		q    engine.RunQuery
		want []string
	}{
		{"all", engine.RunQuery{}, newestFirst(mine)},
		{"completed", engine.RunQuery{Status: engine.StatusCompleted}, newestFirst(finished)},
		{"graph", engine.RunQuery{GraphName: "support_agent"}, newestFirst(waiting)},
		{"unfinished", engine.RunQuery{Unfinished: true}, newestFirst(unfinished)},
		{"running", engine.RunQuery{Status: engine.StatusRunning}, newestFirst(waiting)},
		{"pending", engine.RunQuery{Status: engine.StatusPending}, []string{"pending"}},
		{"created window", engine.RunQuery{CreatedAfter: created("a03"), CreatedBefore: created("a09")}, newestFirst(mine[3:9])},
	} {
		for _, limit := range []int{1, 2, 100} {
			q := tt.q
			q.Owner, q.Limit = "alice", limit
			if got := listIDs(t, r, q); !slices.Equal(got, tt.want) {
				t.Errorf("%s, limit %d:\n got %v\nwant %v", tt.name, limit, got, tt.want)
			}
		}
	}
	// An owner without runs: one query of an empty partition, no head read, no token.
	r.counts.Reset()
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Owner: "eve", Limit: 1})
	if err != nil || len(page.Runs) != 0 || page.ContinuationToken != "" {
		t.Errorf("eve lists %v, token %q, %v; want nothing", page.Runs, page.ContinuationToken, err)
	}
	if q, g := r.counts.Queries.Load(), r.counts.Gets.Load(); q != 1 || g != 0 {
		t.Errorf("eve's listing: %d queries, %d reads; want 1, 0", q, g)
	}
	// Paging one run a page: every page holds one run, and the last one carries no token.
	q, pages := engine.RunQuery{Owner: "alice", Limit: 1}, 0
	for {
		page, err := r.e.ListRuns(t.Context(), q)
		if err != nil || len(page.Runs) != 1 {
			t.Fatalf("page %d: %v, %v; want one run", pages, page.Runs, err)
		}
		pages++
		if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
			break
		}
	}
	if pages != len(mine) {
		t.Errorf("%d pages of one for %d runs", pages, len(mine))
	}
	if all, active := ownerRows(t, r, "alice"); all != 13 || active != 5 {
		t.Errorf("alice's rows: %d, %d active; want 13, 5 (finished runs leave the active partition)", all, active)
	}
	// Finishing, purging and replacing keep the owner's partitions in step.
	if err := r.e.CancelRun(t.Context(), "a00", "done"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "a01"); err != nil {
		t.Fatal(err)
	}
	r.startAs(t, "data_pipeline", "a02", "bob", "", pipeline) // replaces alice's a02
	if all, active := ownerRows(t, r, "alice"); all != 11 || active != 3 {
		t.Errorf("alice's rows after cancel, purge, replace (and pending's finish): %d, %d active; want 11, 3", all, active)
	}
	if got := listIDs(t, r, engine.RunQuery{Owner: "bob", GraphName: "data_pipeline"}); !slices.Equal(got, []string{"a02"}) {
		t.Errorf("bob's data_pipeline runs: %v, want the run that replaced alice's", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Owner: "alice"}); slices.Contains(got, "a02") || slices.Contains(got, "a01") {
		t.Errorf("alice still lists her replaced or purged run: %v", got)
	}
}

// TestEngine_ListRuns_Owner_OnlyAStringOwner: metadata whose owner is no string ValidOwner
// accepts files no owner rows; a listing by such an owner reads nothing; a grouped run with
// an owner is listed by its group for that owner only.
func TestEngine_ListRuns_Owner_OnlyAStringOwner(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for i, meta := range []string{`{"owner":7}`, `{"owner":""}`, `{"owner":"tab\tin"}`, `{"owner":"` + strings.Repeat("x", engine.MaxOwnerBytes+1) + `"}`, `{"Owner":"alice"}`, `{"owner":{"id":"alice"}}`} {
		if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: fmt.Sprintf("x%d", i), Input: []byte(pipeline), Metadata: []byte(meta)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := indexRows(t, r, "~owner~") + indexRows(t, r, "~oactive~"); n != 0 {
		t.Errorf("%d owner rows for owners the index does not keep", n)
	}
	for _, o := range []string{"tab\tin", strings.Repeat("x", engine.MaxOwnerBytes+1), "bad\xff"} {
		r.counts.Reset()
		if page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Owner: o}); err != nil || len(page.Runs) != 0 || page.ContinuationToken != "" || r.counts.Table() != 0 {
			t.Errorf("owner %q: %v %q %v after %d operations; want nothing, read nothing", o, page.Runs, page.ContinuationToken, err, r.counts.Table())
		}
	}
	r.startAs(t, "data_pipeline", "g1", "alice", "thread-1", pipeline)
	r.startAs(t, "data_pipeline", "g2", "bob", "thread-1", pipeline)
	if got := listIDs(t, r, engine.RunQuery{Group: "thread-1", Owner: "alice"}); !slices.Equal(got, []string{"g1"}) {
		t.Errorf("alice's runs of the group: %v", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Owner: "alice"}); !slices.Equal(got, []string{"g1"}) {
		t.Errorf("alice's runs: %v", got)
	}
}

// TestEngine_ListRuns_OwnerCostsWhatItReturns: among many runs of other owners and runs
// without one, a page of one owner's runs costs one query of that owner's partition and a
// head read per run; every other partition is left alone.
func TestEngine_ListRuns_OwnerCostsWhatItReturns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	for i := range 150 {
		owner := []string{"", "bob", "carol"}[i%3]
		r.startAs(t, "support_agent", fmt.Sprintf("other-%03d", i), owner, "", support)
		if i%30 == 0 {
			r.startAs(t, "support_agent", fmt.Sprintf("mine-%03d", i), "alice", "", support)
		}
	}
	r.drive(t)
	var partitions []string
	r.fstore.BeforeQuery = func(q engine.Query) error {
		partitions = append(partitions, q.PartitionKey)
		return nil
	}
	all, active := ownerPartitions("alice")
	for _, tt := range []struct {
		name      string
		q         engine.RunQuery
		want      string
		partition string
		token     bool
	}{
		{"newest 2", engine.RunQuery{Owner: "alice", Limit: 2}, "mine-120,mine-090", all, true},
		{"running, newest 2", engine.RunQuery{Owner: "alice", Status: engine.StatusRunning, Limit: 2}, "mine-120,mine-090", active, true},
		{"all 5", engine.RunQuery{Owner: "alice", Limit: 5}, "mine-120,mine-090,mine-060,mine-030,mine-000", all, false},
		{"nobody's", engine.RunQuery{Owner: "eve", Limit: 1}, "", strings.Replace(all, ownerHash("alice"), ownerHash("eve"), 1), false},
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
		if got := strings.Join(ids, ","); got != tt.want || (page.ContinuationToken != "") != tt.token {
			t.Errorf("%s: %s, token %q; want %s, a token: %v", tt.name, got, page.ContinuationToken, tt.want, tt.token)
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

func ownerHash(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:16])
}

// TestEngine_Owner_FailedStartAndOrphans: the owner rows of a start that never stored its
// head are removed by a listing of the owner once old enough, and by the repair pass.
func TestEngine_Owner_FailedStartAndOrphans(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		switch {
		case isHeadBatch(ops) && ops[0].Entity.PartitionKey == "refused":
			return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
		case isHeadBatch(ops) && ops[0].Entity.PartitionKey == "unknown":
			return enginetest.ErrInjected // not a refusal: left to the repair pass
		case isIndexOp(ops) && ops[0].Kind == engine.OpDelete:
			return enginetest.ErrInjected // the failed start cannot clean up
		}
		return nil
	}
	for _, id := range []string{"refused", "unknown"} {
		if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id, Input: []byte(pipeline), Metadata: []byte(`{"owner":"alice"}`)}); err == nil {
			t.Fatalf("start %s succeeded", id)
		}
	}
	r.fstore.BeforeSubmit = nil
	r.startAs(t, "support_agent", "live", "alice", "", support)
	if all, active := ownerRows(t, r, "alice"); all != 3 || active != 3 {
		t.Fatalf("alice's rows %d, %d active; want the two orphans' and the live run's", all, active)
	}
	clk.advance(2 * time.Minute)
	if got := listIDs(t, r, engine.RunQuery{Owner: "alice"}); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("alice lists %v", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Owner: "alice", Unfinished: true}); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("alice's unfinished runs: %v", got)
	}
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if all, active := ownerRows(t, r, "alice"); all != 1 || active != 1 {
		t.Errorf("alice's rows after the listings and the repair pass: %d, %d active; want the live run's only", all, active)
	}
	if n := indexRows(t, r, "~"); n != 6 {
		t.Errorf("%d index rows, want the live run's 6 (the orphans' removed from every family)", n)
	}
}
