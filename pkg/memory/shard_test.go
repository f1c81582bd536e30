package memory_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Partitions live in separately locked shards: writers on many partitions, emptied
// partitions and paged cross-partition queries running at once must still give one
// consistent key order, every row once, and no deadlock.
func TestStore_ShardedPartitions_CrossPartitionPagesInKeyOrder(t *testing.T) {
	t.Parallel()
	s := memory.NewStore()
	ctx := t.Context()
	const writers, perWriter = 4, 150
	want := make([][2]string, 0, writers*perWriter)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7)) // seeded
			for i := range perWriter {
				pk := fmt.Sprintf("p%03d", rng.IntN(60))
				rk := fmt.Sprintf("w%d-%04d", w, i)
				ent := engine.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"Writer": int64(w), "Status": "Running"}}
				if _, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: ent}}); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 { // an emptied partition: insert and delete in a partition of its own
					tmp := engine.Entity{PartitionKey: fmt.Sprintf("t%d-%d", w, i), RowKey: "r", Properties: map[string]any{"X": true}}
					if _, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: tmp}}); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpDelete, IfMatch: engine.ETagAny, Entity: tmp}}); err != nil {
						t.Error(err)
						return
					}
				}
				mu.Lock()
				want = append(want, [2]string{pk, rk})
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader paging across partitions meanwhile: each page in key order
		defer wg.Done()
		for range 30 {
			if got := pageAll(t, s, 7); !slices.IsSortedFunc(got, cmpKeys) {
				t.Error("a page while writing is out of key order")
				return
			}
		}
	}()
	wg.Wait()
	slices.SortFunc(want, cmpKeys)
	if got := pageAll(t, s, 7); !slices.Equal(got, want) {
		t.Fatalf("paged query: %d rows, want %d in key order", len(got), len(want))
	}
	if n := s.Len(); n != len(want) {
		t.Fatalf("Len = %d, want %d", n, len(want))
	}
}

func cmpKeys(a, b [2]string) int {
	if a[0] != b[0] {
		if a[0] < b[0] {
			return -1
		}
		return 1
	}
	switch {
	case a[1] < b[1]:
		return -1
	case a[1] > b[1]:
		return 1
	}
	return 0
}

// pageAll reads every row of s, limit rows a page, following the continuation token.
func pageAll(t *testing.T, s *memory.Store, limit int) [][2]string {
	t.Helper()
	var out [][2]string
	q := engine.Query{Limit: limit}
	for {
		page, err := s.Query(t.Context(), q)
		if err != nil {
			t.Error(err)
			return out
		}
		for _, e := range page.Entities {
			out = append(out, [2]string{e.PartitionKey, e.RowKey})
		}
		if page.Continuation == "" {
			return out
		}
		q.Continuation = page.Continuation
	}
}
