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

func ExampleContextWithLoss() {
	l := lock.NewInProcessThreadLock() // never lost: the context only ends on cancel
	token, _, _ := l.Acquire(context.Background(), "g", "t", 0)
	ctx, cancel := lock.ContextWithLoss(context.Background(), l, "g", "t", token)
	fmt.Println(ctx.Err())
	cancel()
	l.Release("g", "t", token)
	fmt.Println(ctx.Err())
	// Output:
	// <nil>
	// context canceled
}

// A ThreadLock implementation hands out owner tokens of this shape.
func ExampleNewToken() {
	a, b := lock.NewToken(), lock.NewToken()
	fmt.Println(len(a), a != b)
	// Output: 32 true
}
