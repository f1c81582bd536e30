package threads_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// A bounded in-memory store drops the creator's least recently updated thread that is not
// busy when a new thread would pass its bound.
func ExampleNewBoundedMemory() {
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := threads.NewBoundedMemory(2)
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		_ = s.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("t", i), CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle})
	}
	_, err := s.Get(ctx, "t0")
	n, _ := s.Count(ctx, threads.Query{})
	fmt.Println(n, err != nil)
	// Output: 2 true
}

// A store on a byte budget refuses a thread that would pass its identity's share, and keeps
// every thread it admitted.
func ExampleNewLimitedMemory() {
	b, _ := membudget.New(membudget.Limits{Total: 1 << 20, PerIdentity: 64 << 10})
	s := threads.NewLimitedMemory(threads.MemoryOptions{Budget: b})
	ctx := membudget.NewWork(context.Background(), "alice")
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	meta := map[string]any{"owner": "alice", "notes": strings.Repeat("n", 20<<10)}
	var err error
	n := 0
	for ; err == nil; n++ {
		err = s.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("t", n), CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle, Metadata: meta})
	}
	kept, _ := s.Count(ctx, threads.Query{})
	fmt.Println(kept, errors.Is(err, threads.ErrStorageFull))
	// Output: 2 true
}
