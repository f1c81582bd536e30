package lock_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/lock"
)

func ExampleNewInProcessThreadLock() {
	l := lock.NewInProcessThreadLock()
	ctx := context.Background()

	token, ok, err := l.Acquire(ctx, "echo_agent", "thread-1", 0)
	if err != nil || !ok {
		fmt.Println("busy or failed")
		return
	}
	_, again, _ := l.Acquire(ctx, "echo_agent", "thread-1", 0)
	fmt.Println("second acquire:", again)

	l.Release("echo_agent", "thread-1", token)
	_, afterRelease, _ := l.Acquire(ctx, "echo_agent", "thread-1", 0)
	fmt.Println("after release:", afterRelease)
	// Output:
	// second acquire: false
	// after release: true
}
