//go:build integration

package bloblock

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
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

// proxied is a container of the test's own on Azurite, reached directly (another holder, an
// operator) and through a faultproxy in front of the blob endpoint (the lock under test).
type proxied struct {
	direct, via *container.Client
	proxy       *faultproxy.Proxy
}

// newProxiedContainer creates a container, deleted at cleanup, and a proxy with a fixed seed
// (no rule here draws on it: every rule fires for each request it matches). The proxied
// client keeps the SDK's retries (three) with millisecond delays, so a fault that lasts is
// returned after four tries at once rather than after seconds.
func newProxiedContainer(t testing.TB) proxied {
	t.Helper()
	direct, name := newAzuriteContainer(t)
	set, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: 20, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	via, err := container.NewClientFromConnectionString(set.ConnectionString(), name, &container.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return proxied{direct: direct, via: via, proxy: set.Blob}
}

// count counts the requests m matches as they pass the proxy. It is a rule that never fires,
// so add it before the rules that fault (a faulted request stops at its rule).
func (p proxied) count(m faultproxy.Matcher) *atomic.Int64 {
	var n atomic.Int64
	p.proxy.Add(faultproxy.Rule{Name: "count", Match: func(r *faultproxy.Request) bool {
		if m(r) {
			n.Add(1)
		}
		return false
	}})
	return &n
}

// newManualLock returns a lock on c (closed at cleanup) with no renewer: the test calls
// renewAll for each renewal round, each call bounded by a minute.
func newManualLock(t testing.TB, c *container.Client, opts Options) *BlobLeaseThreadLock {
	t.Helper()
	opts.DisableAutoRenew = true
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = 15 * time.Second
	}
	l := newAzuriteLock(t, c, opts)
	l.renewEvery, l.renewTimeout = time.Minute, time.Minute
	return l
}

// takeOver breaks the lease on blob at once and takes a new one (15 s) as another holder.
func takeOver(t testing.TB, c *container.Client, blob string) *lease.BlobClient {
	t.Helper()
	op, err := breakAndTake(c, blob)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// breakAndTake is takeOver for goroutines other than the test's.
func breakAndTake(c *container.Client, blob string) (*lease.BlobClient, error) {
	op, err := lease.NewBlobClient(c.NewBlobClient(blob), nil)
	if err != nil {
		return nil, err
	}
	if _, err := op.BreakLease(context.Background(), &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](0)}); err != nil {
		return nil, fmt.Errorf("break lease on %s: %w", blob, err)
	}
	if _, err := op.AcquireLease(context.Background(), 15, nil); err != nil {
		return nil, fmt.Errorf("take over lease on %s: %w", blob, err)
	}
	return op, nil
}

// leaseState returns the lease state of blob.
func leaseState(t testing.TB, c *container.Client, blob string) lease.StateType {
	t.Helper()
	props, err := c.NewBlobClient(blob).GetProperties(context.Background(), nil)
	if err != nil {
		t.Fatalf("properties of %s: %v", blob, err)
	}
	if props.LeaseState == nil {
		return ""
	}
	return *props.LeaseState
}

// newLogs returns a logger at level writing to a fresh buffer. The buffer is not guarded:
// read it once the goroutines that log are done.
func newLogs(level slog.Level) (*slog.Logger, *bytes.Buffer) {
	b := &bytes.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level})), b
}

// mustAcquire takes (graph, thread) on l at once, failing the test otherwise.
func mustAcquire(t testing.TB, l *BlobLeaseThreadLock, graph, thread string) string {
	t.Helper()
	tok, ok, err := l.Acquire(context.Background(), graph, thread, 0)
	if !ok || err != nil {
		t.Fatalf("Acquire(%s, %s) = %v, %v; want acquired", graph, thread, ok, err)
	}
	return tok
}

// size returns the number of tracked keys.
func (l *BlobLeaseThreadLock) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
