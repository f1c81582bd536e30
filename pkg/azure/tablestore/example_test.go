package tablestore_test

import (
	"context"
	"os"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// A Store on the table "runs" of the account in AzureWebJobsStorage; a run's head and
// history rows commit in one batch, and Submit returns the head's new ETag for the next
// step's If-Match.
func ExampleNew() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	table, err := clients.EnsureTable(ctx, "runs")
	if err != nil {
		return
	}
	var store engine.Store = tablestore.New(table)
	etags, err := store.Submit(ctx, []engine.Op{
		{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "run-1", RowKey: "head", Properties: map[string]any{"Seq": int64(0)}}},
		{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "run-1", RowKey: "h000000000001", Properties: map[string]any{"Kind": "start"}}},
	})
	_, _ = etags, err
}

// Open creates the table when it is missing and returns the Store on it: what launch does
// for the durable engine at startup.
func ExampleOpen() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	store, err := tablestore.Open(ctx, clients, "funcgraphruns")
	if err != nil {
		return
	}
	_, _ = store.Get(ctx, "run-1", "head")
}
