package lock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

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

// Open the distributed lock on the app's storage account (here a local Azurite) and run
// work under a context that ends if the lease is lost.
func ExampleOpenBlobLease() {
	ctx := context.Background()
	l, err := lock.OpenBlobLease(ctx, "UseDevelopmentStorage=true", lock.DefaultLockContainer, lock.BlobLeaseOptions{})
	if err != nil {
		fmt.Println("open lock:", err)
		return
	}
	defer l.Close()

	token, ok, err := l.Acquire(ctx, "echo_agent", "thread-1", 0)
	if err != nil || !ok {
		return // 500 on err, 409 when busy
	}
	defer l.Release("echo_agent", "thread-1", token)
	runCtx, cancel := lock.ContextWithLoss(ctx, l, "echo_agent", "thread-1", token)
	defer cancel()
	_ = runCtx // run the graph with runCtx; stop before writing once it is done
}

func ExampleNewBlobLeaseThreadLock() {
	var c *container.Client // from azblob, for an existing container
	l, err := lock.NewBlobLeaseThreadLock(context.Background(), lock.BlobLeaseOptions{
		Container:     c,
		LeaseDuration: 30 * time.Second,
	})
	fmt.Println(l == nil, err != nil)
	// Output: true true
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
