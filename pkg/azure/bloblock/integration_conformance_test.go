//go:build integration

package bloblock_test

import (
	"context"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/funcgraph/funcgraph/pkg/azure/bloblock"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/lock/locktest"
)

// Every lock in one subtest is a separate instance on one container, as separate
// processes would be.
func TestIntegrationBlobLeaseThreadLock_Conformance(t *testing.T) {
	name := azuritetest.UniqueName("conf")
	c, err := container.NewClientFromConnectionString(azuritetest.ConnectionString(t), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
	var mu sync.Mutex
	locktest.RunThreadLockTests(t, func(t *testing.T) lock.ThreadLock {
		mu.Lock()
		defer mu.Unlock()
		l, err := bloblock.New(t.Context(), bloblock.Options{Container: c})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l
	})
}
