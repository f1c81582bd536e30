//go:build integration

package launch_test

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationFromEnv_DistributedLock reads GRAPH_LOCK_BACKEND=distributed on Azurite: the
// settings carry a Blob lease lock, whose container is created.
func TestIntegrationFromEnv_DistributedLock(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	container := azuritetest.UniqueName("locks")
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		launch.EnvLockBackend:   "distributed",
		launch.EnvStorage:       conn,
		launch.EnvLockContainer: container,
		launch.EnvStoragePrefix: azuritetest.UniqueName("t"),
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if s.ThreadLock == nil {
		t.Fatal("ThreadLock is nil, want the blob lease lock")
	}
	client, err := azblob.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ServiceClient().NewContainerClient(container).GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("lock container %q was not created: %v", container, err)
	}
}
