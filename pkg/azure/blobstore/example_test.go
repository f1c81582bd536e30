package blobstore_test

import (
	"context"
	"os"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
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

// Open creates the container when it is missing and returns the payload store on it: what
// launch does for the durable engine at startup.
func ExampleOpen() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	p, err := blobstore.Open(ctx, clients, "funcgraph-payloads")
	if err != nil {
		return
	}
	_ = p.Put(ctx, "run-1/1/state", []byte(`{"big":"state"}`))
}

// A live log grows by appends at its length; a reader keeps its offset and resumes there.
func ExampleNewLive() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	live, err := blobstore.OpenLive(ctx, clients, "funcgraph-live", nil)
	if err != nil {
		return
	}
	at, err := live.Append(ctx, "run-1/1/live", 0, []byte("first chunk\n"))
	if err != nil {
		return // ErrConflict: another writer, or this append's own lost first try; read to tell
	}
	_, _ = live.Append(ctx, "run-1/1/live", at, []byte("second chunk\n"))
	data, length, _ := live.Read(ctx, "run-1/1/live", 0, 1<<20)
	_, _ = data, length
}
