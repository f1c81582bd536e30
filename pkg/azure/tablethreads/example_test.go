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

// ExampleStore_Reindex indexes, after a rolling deploy, the threads that instances of an
// earlier release wrote meanwhile (Open indexes an earlier release's threads once by itself).
func ExampleStore_Reindex() {
	settings := azure.SettingsFrom("", os.Getenv)
	if !settings.Configured() {
		return
	}
	clients, err := azure.NewClients(settings, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	store, err := tablethreads.Open(ctx, clients, tablethreads.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := store.Reindex(ctx)
	fmt.Println(n, err)
}
