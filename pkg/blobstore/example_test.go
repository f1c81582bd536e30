package blobstore_test

import (
	"context"
	"os"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/blobstore"
)

// Payloads of a run share its prefix, so purging a run is one DeletePrefix.
func ExampleNew() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	c, err := clients.EnsureContainer(ctx, "funcgraph-payloads")
	if err != nil {
		return
	}
	p := blobstore.New(c)
	_ = p.Put(ctx, "run-1/1/state", []byte(`{"big":"state"}`))
	data, _ := p.Get(ctx, "run-1/1/state")
	_ = data
	_, _ = p.DeletePrefix(ctx, "run-1/")
}
