package threads_test

import (
	"context"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// The in-memory store is the platform routes' default (platform.Options.Threads); it serves
// one instance and loses its threads on restart. Search filters by metadata and status, and a
// sweep frees threads left busy by a crashed run.
func ExampleNewMemory() {
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := threads.NewMemory()
	for i, user := range []string{"ada", "bob", "ada"} {
		at := t0.Add(time.Duration(i) * time.Minute)
		_ = s.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("t", i), CreatedAt: at, UpdatedAt: at,
			Status: threads.StatusIdle, Metadata: map[string]any{"user": user}})
	}
	_, _ = s.Acquire(ctx, "t0", "echo_agent", nil, t0)

	mine, _ := s.Search(ctx, threads.Query{Metadata: map[string]any{"user": "ada"}})
	for _, t := range mine {
		fmt.Println(t.ThreadID, t.Status)
	}
	moved, _ := s.ResetStaleLocks(ctx, time.Hour, threads.StatusError, t0.Add(2*time.Hour))
	busy, _ := s.Count(ctx, threads.Query{Status: threads.StatusBusy})
	fmt.Println(moved, busy)
	// Output:
	// t2 idle
	// t0 busy
	// 1 0
}
