//go:build integration

package main

import (
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// TestIntegrationBuildApp_DistributedLock starts the example app with the distributed lock on
// Azurite: the app opens the blob lease lock, which creates its container.
func TestIntegrationBuildApp_DistributedLock(t *testing.T) {
	// pkg/internal/azuritetest is out of reach from handler/; same rule: never skip.
	conn := os.Getenv("FUNCGRAPH_TEST_STORAGE")
	if conn == "" {
		t.Fatal("FUNCGRAPH_TEST_STORAGE is not set: run integration tests through `make test`")
	}
	container := "locks" + strings.ToLower(rand.Text()[:12])
	app, err := buildApp(t.Context(), envOf(map[string]string{
		envLockBackend:   "distributed",
		envStorage:       conn,
		envLockContainer: container,
	}), discard())
	if err != nil {
		t.Fatalf("buildApp: %v", err)
	}
	defer func() {
		if err := app.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	client, err := azblob.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ServiceClient().NewContainerClient(container).GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("lock container %q was not created: %v", container, err)
	}
}
