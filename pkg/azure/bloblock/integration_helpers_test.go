//go:build integration

package bloblock

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// newAzuriteContainer creates a fresh container on the test Azurite, deleted at cleanup.
func newAzuriteContainer(t testing.TB) (*container.Client, string) {
	t.Helper()
	name := azuritetest.UniqueName("locks")
	c, err := container.NewClientFromConnectionString(azuritetest.ConnectionString(t), name, nil)
	if err != nil {
		t.Fatalf("container client: %v", err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatalf("create container %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
	return c, name
}

// newAzuriteLock returns a blob lease lock on c, closed at cleanup.
func newAzuriteLock(t testing.TB, c *container.Client, opts Options) *BlobLeaseThreadLock {
	t.Helper()
	opts.Container = c
	l, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// rawLease is a lease client on one blob of c, standing in for another holder or an operator.
func rawLease(t testing.TB, c *container.Client, blob string) *lease.BlobClient {
	t.Helper()
	lc, err := lease.NewBlobClient(c.NewBlobClient(blob), nil)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// waitClosed reports whether ch closes within d.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}
