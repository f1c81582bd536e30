//go:build integration

package azure_test

import (
	"context"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// Ensure* create what is missing and accept what exists (a second start of the app).
func TestIntegrationClients_Ensure_Idempotent(t *testing.T) {
	t.Parallel()
	c, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, queue, cont := azuritetest.UniqueName("ens"), azuritetest.UniqueName("ens-"), azuritetest.UniqueName("ens-")
	for range 2 {
		tc, err := c.EnsureTable(ctx, table)
		if err != nil {
			t.Fatalf("EnsureTable: %v", err)
		}
		if _, err := c.EnsureQueue(ctx, queue); err != nil {
			t.Fatalf("EnsureQueue: %v", err)
		}
		if _, err := c.EnsureContainer(ctx, cont); err != nil {
			t.Fatalf("EnsureContainer: %v", err)
		}
		t.Cleanup(func() { _, _ = tc.Delete(context.Background(), nil) })
	}
	if _, err := c.Queues.NewQueueClient(queue).GetProperties(ctx, nil); err != nil {
		t.Errorf("queue missing: %v", err)
	}
	if _, err := c.EnsureTable(ctx, "bad-name"); err == nil {
		t.Error("invalid table name accepted")
	}
	_, _ = c.Queues.DeleteQueue(context.Background(), queue, nil)
	_, _ = c.Blobs.DeleteContainer(context.Background(), cont, nil)
}
