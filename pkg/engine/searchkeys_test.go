package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// startKeyed starts a run of data_pipeline with search keys.
func (r *rig) startKeyed(t *testing.T, id string, keys map[string]string) {
	t.Helper()
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id, Input: []byte(`{"source_url":"u"}`), SearchKeys: keys}); err != nil {
		t.Fatalf("StartRun(%s): %v", id, err)
	}
}

// TestEngine_SearchKeys_ListingReadsTheKeysPartitionOnly: among runs without the key, and
// runs with another value, a listing by key reads one partition, the key's, and a head per
// run it lists.
func TestEngine_SearchKeys_ListingReadsTheKeysPartitionOnly(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	for i := range 60 {
		r.startKeyed(t, fmt.Sprintf("other-%02d", i), map[string]string{"ticket": fmt.Sprintf("T-%d", i%7)})
		if i%20 == 0 {
			r.startKeyed(t, fmt.Sprintf("mine-%02d", i), map[string]string{"ticket": "T-42", "customer": "acme"})
		}
	}
	r.drive(t)
	var partitions []string
	r.fstore.BeforeQuery = func(q engine.Query) error {
		partitions = append(partitions, q.PartitionKey)
		return nil
	}
	r.counts.Reset()
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Keys: map[string]string{"ticket": "T-42"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, run := range page.Runs {
		ids = append(ids, run.InstanceID)
	}
	if !slices.Equal(ids, []string{"mine-40", "mine-20", "mine-00"}) || page.ContinuationToken != "" {
		t.Errorf("by ticket: %v, token %q", ids, page.ContinuationToken)
	}
	if q, g, s := r.counts.Queries.Load(), r.counts.Gets.Load(), r.counts.Submits.Load(); q != 1 || g != 3 || s != 0 {
		t.Errorf("%d queries, %d reads, %d writes; want 1, 3, 0", q, g, s)
	}
	if len(partitions) != 1 || partitions[0][:5] != "~key~" {
		t.Errorf("read partitions %v, want one key partition", partitions)
	}
	if n := indexRows(t, r, "~key~"); n != 63+3 {
		t.Errorf("%d key rows, want one per key of each run (66)", n)
	}
}

// TestEngine_SearchKeys_FailedStartAndOrphans: a failed start removes its key rows; the rows of
// a start of unknown outcome are never listed and go with the repair pass, once it fenced the
// start; a purge and a replacement remove the run's key rows.
func TestEngine_SearchKeys_FailedStartAndOrphans(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	keys := map[string]string{"ticket": "T-1"}
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isHeadBatch(ops) && ops[0].Entity.PartitionKey == "refused" {
			return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
		}
		if isHeadBatch(ops) && ops[0].Entity.PartitionKey == "unknown" {
			return enginetest.ErrInjected // the batch may have landed
		}
		return nil
	}
	for _, id := range []string{"refused", "unknown"} {
		if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id, Input: []byte(`{"source_url":"u"}`), SearchKeys: keys}); err == nil {
			t.Fatalf("start %s succeeded", id)
		}
	}
	r.fstore.BeforeSubmit = nil
	if n := indexRows(t, r, "~key~"); n != 1 {
		t.Fatalf("%d key rows; want the unknown start's only", n)
	}
	if got := listIDs(t, r, engine.RunQuery{Keys: keys}); len(got) != 0 {
		t.Fatalf("a start that stored no head is listed by its key: %v", got)
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := indexRows(t, r, "~"); n != 0 {
		t.Fatalf("%d index rows after the repair pass; want none", n)
	}
	r.startKeyed(t, "a", keys)
	r.startKeyed(t, "b", keys)
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	r.startKeyed(t, "b", map[string]string{"ticket": "T-2"}) // replaces the finished b
	r.drive(t)
	if got := listIDs(t, r, engine.RunQuery{Keys: keys}); len(got) != 0 {
		t.Errorf("T-1 after the purge and the replacement: %v", got)
	}
	if got := listIDs(t, r, engine.RunQuery{Keys: map[string]string{"ticket": "T-2"}}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("T-2: %v", got)
	}
	if n := indexRows(t, r, "~key~"); n != 1 {
		t.Errorf("%d key rows; want the replacing run's only", n)
	}
	enginetest.CheckNoOrphanRows(t, r.store, r.e, "a")
}

// TestEngine_SearchKeys_OrphanRowRemovedByAListing: the key row of a start that never stored
// its head, met by a listing by key once it is old, goes with the start's other rows.
func TestEngine_SearchKeys_OrphanRowRemovedByAListing(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if isHeadBatch(ops) {
			return &engine.BatchError{Index: 0, Err: fmt.Errorf("%w: refused", engine.ErrInvalidEntity)}
		}
		if isIndexOp(ops) && ops[0].Kind == engine.OpDelete {
			return enginetest.ErrInjected // the failed start cannot clean up
		}
		return nil
	}
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "x", Input: []byte(`{"source_url":"u"}`),
		SearchKeys: map[string]string{"ticket": "T-1"}}); err == nil {
		t.Fatal("start succeeded")
	}
	r.fstore.BeforeSubmit = nil
	clk.advance(2 * time.Minute)
	if got := listIDs(t, r, engine.RunQuery{Keys: map[string]string{"ticket": "T-1"}}); len(got) != 0 {
		t.Fatalf("lists %v", got)
	}
	if n := indexRows(t, r, "~"); n != 0 {
		t.Errorf("%d index rows after the listing; want none (the orphan's removed from every family)", n)
	}
}

// TestEngine_SearchKeys_BytesPerKey measures what one key adds to a run's rows: its index row,
// and the keys every other row of the run carries (docs/storage.md#search-keys states it).
func TestEngine_SearchKeys_BytesPerKey(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	const id1, id2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	r.startKeyed(t, id1, nil)
	r.startKeyed(t, id2, map[string]string{"ticket": "T-42"})
	size := func(id string) (total, keyRow int) {
		q := engine.Query{}
		for {
			page, err := r.store.Query(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, ent := range page.Entities {
				if ent.PartitionKey != id && ent.Properties["RunID"] != id && ent.Properties["Run"] != id {
					continue
				}
				n, err := engine.ValidateEntity(ent)
				if err != nil {
					t.Fatal(err)
				}
				total += n
				if len(ent.PartitionKey) > 5 && ent.PartitionKey[:5] == "~key~" {
					keyRow = n
				}
			}
			if q.Continuation = page.Continuation; q.Continuation == "" {
				return total, keyRow
			}
		}
	}
	plain, _ := size(id1)
	keyed, keyRow := size(id2)
	t.Logf("one key (ticket=T-42, a 36-character id): the key row %d bytes, the run's rows %d bytes more in all", keyRow, keyed-plain)
	if keyRow == 0 || keyRow > 1024 || keyed-plain < keyRow || keyed-plain > 2*1024 {
		t.Errorf("key row %d bytes, %d more in all; want a row under 1 KiB, under 2 KiB in all", keyRow, keyed-plain)
	}
}

// TestEngine_SearchKeys_RetentionRemovesTheKeyRows: the retention pass that purges a finished
// run removes its key rows; a kept run is still found by its key.
func TestEngine_SearchKeys_RetentionRemovesTheKeyRows(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxAge: time.Hour}}, false)
	r.startKeyed(t, "old", map[string]string{"ticket": "T-1", "customer": "acme"})
	r.drive(t)
	clock.advance(2 * time.Hour)
	r.startKeyed(t, "fresh", map[string]string{"customer": "acme"})
	r.drive(t)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), "old"); err == nil {
		t.Fatal("the old run was kept")
	}
	if n := indexRows(t, r, "~key~"); n != 1 {
		t.Errorf("%d key rows after retention; want the fresh run's only", n)
	}
	if got := listIDs(t, r, engine.RunQuery{Keys: map[string]string{"customer": "acme"}}); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("by customer: %v", got)
	}
}
