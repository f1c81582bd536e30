//go:build integration

package tablethreads_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablethreads"
	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

func TestStore_Conformance_Integration(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	threadstest.RunStoreTests(t, func(t *testing.T) threads.Store {
		s, err := tablethreads.Open(t.Context(), clients, tablethreads.Options{Table: azuritetest.UniqueName("threads"), Logger: hosttest.TestLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, threadstest.Options{MaxRecordBytes: tablethreads.MaxEntityBytes})
}
