//go:build integration

package tablethreads_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
	"github.com/funcgraph/funcgraph/pkg/tablethreads"
)

func TestStore_Conformance_Integration(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	threadstest.RunStoreTests(t, func(t *testing.T) threads.Store {
		s, err := tablethreads.Open(t.Context(), conn, tablethreads.Options{Table: azuritetest.UniqueName("threads"), Logger: hosttest.TestLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, threadstest.Options{MaxRecordBytes: tablethreads.MaxEntityBytes})
}
