package blobcheckpoint_test

import (
	"context"
	"fmt"
	"os"

	"github.com/funcgraph/funcgraph/pkg/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// Open a saver on the account of AzureWebJobsStorage and read a thread's latest checkpoint.
func ExampleOpen() {
	ctx := context.Background()
	s, err := blobcheckpoint.Open(ctx, os.Getenv("AzureWebJobsStorage"), blobcheckpoint.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: "thread-1"})
	fmt.Println(tp.Checkpoint.ID, err)
}
