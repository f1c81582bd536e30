package threads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// The owner index follows every write: after a seeded mix of creates, runs, releases, owner
// patches, deletes and stale-lock resets, each owner's count and its threads that are not
// busy are what a scan of the store finds, and the heaps are in order.
func TestMemory_OwnerIndex_FollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(40, 7))
	m := NewLimitedMemory(MemoryOptions{MaxThreads: 30, MaxThreadsPerOwner: 12})
	owners := []string{"", "amy", "bob", "cat"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		now := t0.Add(time.Duration(rng.IntN(500)) * time.Second)
		id := fmt.Sprint("t", rng.IntN(60))
		o := owners[rng.IntN(len(owners))]
		switch rng.IntN(6) {
		case 0, 1:
			_ = m.Create(ctx, Thread{ThreadID: id, CreatedAt: now, UpdatedAt: now, Status: StatusIdle, Metadata: map[string]any{"owner": o}})
		case 2:
			_, _ = m.Acquire(ctx, id, "g", nil, now)
		case 3:
			_ = m.Release(ctx, id, StatusIdle, nil, now)
		case 4:
			_, _ = m.PatchMetadata(ctx, id, map[string]any{"owner": o}, now)
		case 5:
			if i%7 == 0 {
				_, _ = m.ResetStaleLocks(ctx, time.Second, StatusError, now)
			} else {
				_ = m.Delete(ctx, id)
			}
		}
		checkIndex(t, m)
	}
}

func checkIndex(t *testing.T, m *Memory) {
	t.Helper()
	all, idle := map[string]int{}, map[string][]string{}
	for id, th := range m.threads {
		all[ownerOf(th)]++
		if th.Status != StatusBusy {
			idle[ownerOf(th)] = append(idle[ownerOf(th)], id)
		}
	}
	x := m.index
	if len(x.owners) != len(all) {
		t.Fatalf("index has %d owners, the store %d", len(x.owners), len(all))
	}
	for name, o := range x.owners {
		var ids []string
		for i, e := range o.idle {
			ids = append(ids, e.id)
			if e.pos != i || x.idle[e.id] != e || i > 0 && o.idle.Less(i, (i-1)/2) {
				t.Fatalf("owner %q: idle heap out of order at %d", name, i)
			}
			if !m.threads[e.id].UpdatedAt.Equal(e.at) {
				t.Fatalf("thread %s: indexed at %v, updated %v", e.id, e.at, m.threads[e.id].UpdatedAt)
			}
		}
		sort.Strings(ids)
		want := idle[name]
		sort.Strings(want)
		if o.all != all[name] || fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Fatalf("owner %q: index %d %v, store %d %v", name, o.all, ids, all[name], want)
		}
		if (len(o.idle) > 0) != (o.pos >= 0) || o.pos >= 0 && x.heavy[o.pos] != o {
			t.Fatalf("owner %q: heavy position %d with %d idle", name, o.pos, len(o.idle))
		}
	}
	for i := range x.heavy {
		if i > 0 && x.heavy.Less(i, (i-1)/2) {
			t.Fatalf("heavy heap out of order at %d", i)
		}
	}
}
