package tablethreads_test

import (
	"context"
	"fmt"
	"os"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablethreads"
)

// ExampleOpen opens the thread table of a storage account (here the one AzureWebJobsStorage
// names, by connection string or identity) for the platform routes (platform.Options.Threads).
func ExampleOpen() {
	settings := azure.SettingsFrom("", os.Getenv)
	if !settings.Configured() {
		return
	}
	clients, err := azure.NewClients(settings, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := tablethreads.Open(context.Background(), clients, tablethreads.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = store
}
