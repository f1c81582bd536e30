package threads_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// The bound is per identity with the global bound behind it: eve's 10 000 threads do not
// make bob's next creation drop bob's own older thread (eve keeps her share, a quarter of the
// bound); with the store full of several owners' threads, a creation drops the oldest thread
// of the owner holding the most (the creator's own on a tie, else the smallest name), never
// one of an owner holding fewer; a busy thread is never dropped.
func TestBoundedMemory_PerOwnerBound_GlobalBoundBehindIt(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	kept := func(s *threads.Memory, id string) bool {
		t.Helper()
		_, err := s.Get(ctx, id)
		if err != nil && !errors.Is(err, threads.ErrThreadNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}

	s := threads.NewBoundedMemory(threads.DefaultMemoryMaxThreads)
	if err := s.Create(ctx, owned("bob-old", "bob", at(0), 0)); err != nil {
		t.Fatal(err)
	}
	for i := range threads.DefaultMemoryMaxThreads {
		if err := s.Create(ctx, owned(fmt.Sprint("eve-", i), "eve", at(i+1), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, owned("bob-new", "bob", at(threads.DefaultMemoryMaxThreads+1), 0)); err != nil {
		t.Fatal(err)
	}
	if !kept(s, "bob-old") || !kept(s, "bob-new") {
		t.Fatalf("bob's threads after eve's 10 000: old kept %v, new kept %v", kept(s, "bob-old"), kept(s, "bob-new"))
	}
	if n, _ := s.Count(ctx, threads.Query{Metadata: map[string]any{"owner": "eve"}}); n != threads.DefaultMemoryMaxThreads/4 {
		t.Fatalf("eve holds %d threads, want her share %d", n, threads.DefaultMemoryMaxThreads/4)
	}

	full := threads.NewLimitedMemory(threads.MemoryOptions{MaxThreads: 8, MaxThreadsPerOwner: 4})
	i := 0
	create := func(id, owner string) {
		t.Helper()
		i++
		if err := full.Create(ctx, owned(id, owner, at(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []string{"bob", "amy"} {
		for k := range 4 {
			create(fmt.Sprint(o, "-", k), o)
		}
	}
	if _, err := full.Acquire(ctx, "amy-0", "g", nil, at(0)); err != nil { // busy: never dropped
		t.Fatal(err)
	}
	create("cat-0", "cat") // bob has 4 to drop, amy 3: bob's oldest goes
	create("cat-1", "cat") // bob 3, amy 3: the smallest name, amy, loses her oldest not busy
	create("bob-4", "bob") // bob 3, amy 2, cat 2: bob's own
	for id, want := range map[string]bool{"bob-0": false, "bob-1": false, "bob-2": true, "amy-0": true, "amy-1": false,
		"amy-2": true, "cat-0": true, "cat-1": true, "bob-4": true} {
		if got := kept(full, id); got != want {
			t.Errorf("%s kept = %v, want %v", id, got, want)
		}
	}
	if n, _ := full.Count(ctx, threads.Query{}); n != 8 {
		t.Fatalf("%d threads, want the bound 8", n)
	}

	// On a tie the creator's own goes, though another's name is smaller.
	tie := threads.NewLimitedMemory(threads.MemoryOptions{MaxThreads: 4, MaxThreadsPerOwner: 4})
	for k, id := range []string{"amy-0", "bob-0", "amy-1", "bob-1", "bob-2"} {
		if err := tie.Create(ctx, owned(id, id[:3], at(k), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if !kept(tie, "amy-0") || kept(tie, "bob-0") {
		t.Errorf("on a tie: amy-0 kept %v, bob-0 kept %v; want amy's kept, bob's own dropped", kept(tie, "amy-0"), kept(tie, "bob-0"))
	}
}
