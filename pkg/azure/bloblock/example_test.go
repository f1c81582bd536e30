package bloblock_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/bloblock"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// Open the distributed lock on the app's storage account (AzureWebJobsStorage: a connection
// string, "UseDevelopmentStorage=true" or identity-based settings) from the same clients as
// the app's other stores, and run work under a context that ends if the lease is lost.
func ExampleOpen() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		fmt.Println("storage settings:", err)
		return
	}
	l, err := bloblock.Open(ctx, clients, bloblock.DefaultContainer, bloblock.Options{})
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

func ExampleNew() {
	var c *container.Client // from azblob, for an existing container
	l, err := bloblock.New(context.Background(), bloblock.Options{
		Container:     c,
		LeaseDuration: 30 * time.Second,
	})
	fmt.Println(l == nil, err != nil)
	// Output: true true
}
