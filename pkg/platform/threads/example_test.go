package threads_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func ExampleMemory() {
	ctx, now := context.Background(), time.Now()
	s := threads.NewMemory()
	_ = s.Create(ctx, threads.Thread{ThreadID: "t1", CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle})
	if _, err := s.Acquire(ctx, "t1", "echo_agent", nil, now); err != nil {
		fmt.Println(err)
	}
	_, err := s.Acquire(ctx, "t1", "echo_agent", nil, now)
	fmt.Println(errors.Is(err, threads.ErrThreadBusy))
	_ = s.Release(ctx, "t1", threads.StatusIdle, []byte(`{"ok": true}`), now)
	th, _ := s.Get(ctx, "t1")
	fmt.Println(th.Status, th.AssistantID, string(th.Values))
	// Output:
	// true
	// idle echo_agent {"ok": true}
}
