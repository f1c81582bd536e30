//go:build integration

package tablestore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationSearchKeys_Conformance runs the search-key suite on Azure Table storage.
func TestIntegrationSearchKeys_Conformance(t *testing.T) {
	t.Parallel()
	enginetest.RunSearchKeyTests(t, func(t *testing.T) engine.Store { return tablestore.New(newTable(t)) })
}

// partitionLog records the partitions a store's reads touch.
type partitionLog struct {
	engine.Store
	mu          sync.Mutex
	gets, query []string
}

func (s *partitionLog) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	s.mu.Lock()
	s.gets = append(s.gets, pk)
	s.mu.Unlock()
	return s.Store.Get(ctx, pk, rk)
}

func (s *partitionLog) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	s.mu.Lock()
	s.query = append(s.query, q.PartitionKey)
	s.mu.Unlock()
	return s.Store.Query(ctx, q)
}

func (s *partitionLog) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets, s.query = nil, nil
}

// TestIntegrationSearchKeys_ListingReadsTheKeyRowsOnly: on Azure Table storage, among 200 runs
// of which 3 carry the key ticket=T-42, a listing by that key is one query of the key's
// partition and a head read per run it lists — the same with 50 runs stored as with 200: the
// reads do not grow with the runs that do not carry the key. Page by page, each page is one
// query and one head read; a purge removes the run's key row.
func TestIntegrationSearchKeys_ListingReadsTheKeyRowsOnly(t *testing.T) {
	t.Parallel()
	counts := &enginetest.OpCounts{}
	table := tablestore.New(newTable(t))
	log := &partitionLog{Store: enginetest.CountingStore{Store: table, Counts: counts}}
	queue, reg := memory.NewQueue(), runsapitest.Registry(t, examples.All)
	e, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(), Store: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	start := func(id string, keys map[string]string) {
		t.Helper()
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id, Input: []byte(`{"source_url":"u"}`), SearchKeys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	others := 0
	startOthers := func(n int) {
		for range n {
			keys := map[string]string{"ticket": fmt.Sprintf("T-%d", 1000+others)}
			if others%4 == 0 {
				keys = nil // some runs carry no key at all
			}
			start(fmt.Sprintf("other-%03d", others), keys)
			others++
		}
	}
	mine := map[string]string{"ticket": "T-42", "customer": "acme"}
	for _, id := range []string{"mine-1", "mine-2", "mine-3"} {
		startOthers(15)
		start(id, mine)
	}
	startOthers(2) // 50 runs
	driveQueue(t, e, queue)
	listByKey := func(limit int) (ids []string, queries, gets int64, parts []string) {
		t.Helper()
		log.reset()
		counts.Reset()
		q := engine.RunQuery{Keys: map[string]string{"ticket": "T-42"}, Limit: limit}
		for range 10 {
			page, err := e.ListRuns(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Runs {
				ids = append(ids, r.InstanceID)
			}
			if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
				break
			}
		}
		parts = append(append(parts, log.query...), log.gets...)
		return ids, counts.Queries.Load(), counts.Gets.Load(), parts
	}
	check := func(stored int) {
		t.Helper()
		ids, queries, gets, parts := listByKey(100)
		t.Logf("%d runs stored, 3 with the key: the listing made %d queries and %d reads, of %v", stored, queries, gets, parts)
		if !slices.Equal(ids, []string{"mine-3", "mine-2", "mine-1"}) || queries != 1 || gets != 3 || counts.Submits.Load() != 0 {
			t.Errorf("%d runs stored: listed %v with %d queries, %d reads, %d writes; want the 3 keyed runs, 1 query, 3 reads, no write",
				stored, ids, queries, gets, counts.Submits.Load())
		}
		for _, p := range parts {
			if !strings.HasPrefix(p, "~key~") && !strings.HasPrefix(p, "mine-") {
				t.Errorf("%d runs stored: the listing read partition %q, neither the key's nor a keyed run's", stored, p)
			}
		}
		ids, queries, gets, _ = listByKey(1)
		if !slices.Equal(ids, []string{"mine-3", "mine-2", "mine-1"}) || queries != 3 || gets != 3 {
			t.Errorf("%d runs stored, pages of 1: %v with %d queries, %d reads; want 3 pages of 1 query and 1 read", stored, ids, queries, gets)
		}
	}
	check(50)
	startOthers(150) // 200 runs
	driveQueue(t, e, queue)
	check(200)
	if err := e.PurgeRun(ctx, "mine-2"); err != nil {
		t.Fatal(err)
	}
	if ids, _, _, _ := listByKey(100); !slices.Equal(ids, []string{"mine-3", "mine-1"}) {
		t.Errorf("after the purge: %v", ids)
	}
	page, err := e.ListRuns(ctx, engine.RunQuery{Keys: map[string]string{"customer": "acme"}, Status: engine.StatusCompleted})
	if err != nil || len(page.Runs) != 2 {
		t.Errorf("completed runs of customer acme: %v (%v)", page.Runs, err)
	}
	enginetest.CheckNoOrphanRows(t, table, e, "mine-2")
}
