package threads_test

import (
	"context"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// A bounded in-memory store drops the least recently updated thread that is not busy when a
// new thread would pass its bound.
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
