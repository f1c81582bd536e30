package tablethreads_test

import (
	"context"
	"fmt"
	"os"

	"github.com/funcgraph/funcgraph/pkg/tablethreads"
)

// ExampleOpen opens the thread table of a storage account (here the one in
// AzureWebJobsStorage) for the platform routes (platform.Options.Threads).
func ExampleOpen() {
	conn := os.Getenv("AzureWebJobsStorage")
	if conn == "" {
		return
	}
	store, err := tablethreads.Open(context.Background(), conn, tablethreads.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = store
}
