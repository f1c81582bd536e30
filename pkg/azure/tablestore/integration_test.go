//go:build integration

package tablestore_test

import (
	"context"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// newTable creates a fresh table on Azurite and deletes it when the test ends.
func newTable(t testing.TB) *aztables.Client {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := azuritetest.UniqueName("runs")
	c, err := clients.EnsureTable(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("FUNCGRAPH_KEEP_TABLES") == "" {
			_, _ = c.Delete(context.Background(), nil)
		}
	})
	return c
}

func TestIntegrationStore_Conformance(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	enginetest.RunStoreTests(t, func(*testing.T) engine.Store { return s })
}
