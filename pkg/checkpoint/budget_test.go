package checkpoint_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint/checkpointtest"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

func TestMemory_Budget_ConformanceAndExactAccounting(t *testing.T) {
	b, err := membudget.New(membudget.Limits{Total: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	var savers []*checkpoint.Memory
	checkpointtest.RunSaverTests(t, func(*testing.T) checkpoint.Saver {
		m := checkpoint.NewMemory(checkpoint.MemoryOptions{Budget: b})
		savers = append(savers, m)
		return m
	})
	var held int64
	for _, m := range savers {
		held += checkpoint.HeldBytes(m)
	}
	if used := b.Used(); used != held || held == 0 {
		t.Fatalf("accounted %d bytes, the savers hold %d", used, held)
	}
}

func putValue(t *testing.T, m *checkpoint.Memory, ctxOwner, tid string, n int) error {
	t.Helper()
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelVersions: map[string]string{"a": checkpoint.NextVersion("")}}
	return m.Put(membudget.NewWork(t.Context(), ctxOwner), tid, "", cp,
		map[string]checkpoint.Value{"a": {SerdeType: checkpoint.SerdeJSON, Data: make([]byte, n)}})
}

// Past the budget a checkpoint write is refused with ErrStorageFull and nothing is written;
// the writes an identity's load evicts by MaxThreads are only its own threads.
func TestMemory_Budget_RefusesPastIt_EvictsOnlyTheWritersOwn(t *testing.T) {
	b, err := membudget.New(membudget.Limits{Total: 4 << 20, PerIdentity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	m := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: 5, Budget: b})
	for i := range 2 {
		if err := putValue(t, m, "alice", fmt.Sprint("alice-", i), 100); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		if err := putValue(t, m, "eve", fmt.Sprint("eve-", i), 100); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if _, err := m.Get(t.Context(), checkpoint.Ref{ThreadID: fmt.Sprint("alice-", i)}); err != nil {
			t.Fatalf("alice-%d after eve's load: %v", i, err)
		}
	}
	if _, err := m.Get(t.Context(), checkpoint.Ref{ThreadID: "eve-0"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("eve-0: %v, want forgotten for eve's own newer threads", err)
	}
	err = putValue(t, m, "eve", "eve-big", 1<<20)
	if !errors.Is(err, checkpoint.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
		t.Fatalf("a checkpoint past eve's share = %v, want ErrStorageFull", err)
	}
	if _, err := m.Get(t.Context(), checkpoint.Ref{ThreadID: "eve-big"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("a refused checkpoint was stored: %v", err)
	}
	if err := putValue(t, m, "alice", "alice-2", 500<<10); err != nil {
		t.Fatalf("alice refused while eve is full: %v", err)
	}
	if used, held := b.Used(), checkpoint.HeldBytes(m); used != held {
		t.Fatalf("accounted %d bytes, the saver holds %d", used, held)
	}
}

// Past MaxThreads a write forgets a thread of the identity holding the most, never one of an
// identity holding fewer: eve's threads fill the saver, and bob's second thread forgets
// eve's oldest, not bob's first. The same holds without a budget: the owner is the writer's
// identity either way.
func TestMemory_PastMaxThreads_TheHeaviestOwnerPays(t *testing.T) {
	for _, withBudget := range []bool{true, false} {
		t.Run(fmt.Sprint("budget=", withBudget), func(t *testing.T) {
			var b *membudget.Budget
			if withBudget {
				var err error
				if b, err = membudget.New(membudget.Limits{Total: 4 << 20, PerIdentity: 1 << 20}); err != nil {
					t.Fatal(err)
				}
			}
			m := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: 5, Budget: b})
			for i := range 5 {
				if err := putValue(t, m, "eve", fmt.Sprint("eve-", i), 100); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2 {
				if err := putValue(t, m, "bob", fmt.Sprint("bob-", i), 100); err != nil {
					t.Fatal(err)
				}
			}
			for id, want := range map[string]bool{"bob-0": true, "bob-1": true, "eve-0": false, "eve-1": false, "eve-2": true, "eve-4": true} {
				_, err := m.Get(t.Context(), checkpoint.Ref{ThreadID: id})
				if got := err == nil; got != want {
					t.Errorf("%s kept = %v (%v), want %v", id, got, err, want)
				}
			}
			// At a tie the writer's own goes first, but never the thread it writes.
			one := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: 1, Budget: b})
			for _, w := range []string{"eve", "bob"} {
				if err := putValue(t, one, w, w+"-only", 100); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := one.Get(t.Context(), checkpoint.Ref{ThreadID: "eve-only"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("past a bound of 1, eve's thread is kept (%v): the store grew past its bound", err)
			}
			if withBudget {
				if used, held := b.Used(), checkpoint.HeldBytes(m)+checkpoint.HeldBytes(one); used != held {
					t.Fatalf("accounted %d bytes, the saver holds %d", used, held)
				}
			}
		})
	}
}
