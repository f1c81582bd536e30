package threads_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

func TestLimitedMemory_Budget_Conformance(t *testing.T) {
	b, err := membudget.New(membudget.Limits{Total: 1 << 30, PerIdentity: 1 << 28})
	if err != nil {
		t.Fatal(err)
	}
	var stores []*threads.Memory
	threadstest.RunStoreTests(t, func(*testing.T) threads.Store {
		s := threads.NewLimitedMemory(threads.MemoryOptions{Budget: b})
		stores = append(stores, s)
		return s
	})
	var held int64
	for _, s := range stores {
		held += threads.HeldBytes(s)
	}
	if used := b.Used(); used != held {
		t.Fatalf("accounted %d bytes, the stores hold %d", used, held)
	}
}

func owned(id, owner string, at time.Time, meta int) threads.Thread {
	m := map[string]any{"owner": owner}
	if meta > 0 {
		m["pad"] = strings.Repeat("p", meta)
	}
	return threads.Thread{ThreadID: id, CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle, Metadata: m}
}

// Past its share of the bound an owner's creates drop only its own oldest threads: 10 050 of
// eve's threads leave alice's, and eve keeps a quarter of the bound.
func TestLimitedMemory_PastTheBound_DropsOnlyTheCreatorsThreads(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := threads.NewBoundedMemory(threads.DefaultMemoryMaxThreads)
	for i := range 3 {
		if err := s.Create(ctx, owned(fmt.Sprint("alice-", i), "alice", t0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range threads.DefaultMemoryMaxThreads + 50 {
		if err := s.Create(ctx, owned(fmt.Sprint("eve-", i), "eve", t0.Add(time.Duration(i+1)*time.Second), 0)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := s.Get(ctx, fmt.Sprint("alice-", i)); err != nil {
			t.Fatalf("alice-%d after eve's load: %v", i, err)
		}
	}
	if n, _ := s.Count(ctx, threads.Query{}); n != 3+threads.DefaultMemoryMaxThreads/4 {
		t.Fatalf("%d threads, want alice's 3 and eve's share %d", n, threads.DefaultMemoryMaxThreads/4)
	}
	if _, err := s.Get(ctx, "eve-0"); !errors.Is(err, threads.ErrThreadNotFound) {
		t.Fatalf("eve's oldest thread: %v, want dropped", err)
	}
}

// Past the budget a write is refused with ErrStorageFull and changes nothing; the owner at
// its share is refused while another is admitted; a thread that changes owner moves its
// bytes; deleting frees them.
func TestLimitedMemory_Budget_RefusesPastIt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const share = 1 << 20
	b, err := membudget.New(membudget.Limits{Total: 8 << 20, PerIdentity: share})
	if err != nil {
		t.Fatal(err)
	}
	s := threads.NewLimitedMemory(threads.MemoryOptions{Budget: b})
	eve, alice := membudget.NewWork(t.Context(), "eve"), membudget.NewWork(t.Context(), "alice")
	n := 0
	for ; ; n++ {
		if n == 1000 {
			t.Fatal("1 000 threads of 50 KiB and no refusal")
		}
		err := s.Create(eve, owned(fmt.Sprint("eve-", n), "eve", t0, 50<<10))
		if err != nil {
			if !errors.Is(err, threads.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
				t.Fatalf("refusal = %v, want ErrStorageFull", err)
			}
			if _, gerr := s.Get(eve, fmt.Sprint("eve-", n)); !errors.Is(gerr, threads.ErrThreadNotFound) {
				t.Fatalf("a refused thread was stored: %v", gerr)
			}
			break
		}
	}
	if used := b.UsedBy("eve"); used > share-share/8 {
		t.Fatalf("eve holds %d bytes, past 7/8 of her share %d", used, share)
	}
	if _, err := s.PatchMetadata(eve, "eve-0", map[string]any{"more": strings.Repeat("m", 200<<10)}, t0); !errors.Is(err, threads.ErrStorageFull) {
		t.Fatalf("growing patch past the share = %v, want ErrStorageFull", err)
	}
	if th, _ := s.Get(eve, "eve-0"); th.Metadata["more"] != nil {
		t.Fatal("a refused patch changed the thread")
	}
	if err := s.Create(alice, owned("alice-0", "alice", t0, 50<<10)); err != nil {
		t.Fatalf("alice refused while eve is full: %v", err)
	}
	if _, err := s.PatchMetadata(t.Context(), "eve-1", map[string]any{"owner": "alice"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "eve-2"); err != nil {
		t.Fatal(err)
	}
	if used, held := b.Used(), threads.HeldBytes(s); used != held {
		t.Fatalf("accounted %d bytes, the store holds %d", used, held)
	}
	if b.UsedBy("eve")+b.UsedBy("alice") != b.Used() {
		t.Fatalf("eve %d + alice %d != total %d", b.UsedBy("eve"), b.UsedBy("alice"), b.Used())
	}
	t.Logf("eve created %d threads of 50 KiB metadata within a share of %d bytes", n, share)
}
