package blobcheckpoint_test

import (
	"context"
	"fmt"
	"os"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// Open a saver on the account AzureWebJobsStorage names (by connection string or identity)
// and read a thread's latest checkpoint.
func ExampleOpen() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := blobcheckpoint.Open(ctx, clients, blobcheckpoint.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: "thread-1"})
	fmt.Println(tp.Checkpoint.ID, err)
}
