package bloblock

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// fakeLeases is an in-memory leaseAPI with Azure's lease answers (no expiry). Error hooks
// script failures.
type fakeLeases struct {
	mu      sync.Mutex
	blobs   map[string]*fakeBlob
	nextID  int
	calls   map[string]int
	renewFn func(blob string) error // when set and non-nil result, renew fails with it
	acqFn   func(blob string) error // when set and non-nil result, acquire fails with it
}

type fakeBlob struct {
	leaseID string
	broken  bool
}

func newFakeLeases() *fakeLeases {
	return &fakeLeases{blobs: make(map[string]*fakeBlob), calls: make(map[string]int)}
}

func respErr[C ~string](status int, code C) error {
	return &azcore.ResponseError{StatusCode: status, ErrorCode: string(code)}
}

func (f *fakeLeases) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeLeases) acquire(ctx context.Context, name string, seconds int32) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["acquire"]++
	if f.acqFn != nil {
		if err := f.acqFn(name); err != nil {
			return "", err
		}
	}
	b := f.blobs[name]
	switch {
	case b == nil:
		return "", respErr(http.StatusNotFound, bloberror.BlobNotFound)
	case b.leaseID != "" && !b.broken:
		return "", respErr(http.StatusConflict, bloberror.LeaseAlreadyPresent)
	}
	f.nextID++
	b.leaseID, b.broken = fmt.Sprintf("lease-%d", f.nextID), false
	return b.leaseID, nil
}

func (f *fakeLeases) renew(ctx context.Context, name, leaseID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["renew"]++
	if f.renewFn != nil {
		if err := f.renewFn(name); err != nil {
			return err
		}
	}
	b := f.blobs[name]
	switch {
	case b == nil || b.leaseID == "":
		return respErr(http.StatusConflict, bloberror.LeaseNotPresentWithLeaseOperation)
	case b.leaseID != leaseID:
		return respErr(http.StatusConflict, bloberror.LeaseIDMismatchWithLeaseOperation)
	case b.broken:
		return respErr(http.StatusConflict, bloberror.LeaseIsBrokenAndCannotBeRenewed)
	}
	return nil
}

func (f *fakeLeases) release(ctx context.Context, name, leaseID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["release"]++
	b := f.blobs[name]
	if b == nil || b.leaseID != leaseID {
		return respErr(http.StatusConflict, bloberror.LeaseIDMismatchWithLeaseOperation)
	}
	b.leaseID, b.broken = "", false
	return nil
}

func (f *fakeLeases) createMarker(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["createMarker"]++
	if f.blobs[name] == nil {
		f.blobs[name] = &fakeBlob{}
	}
	return nil
}

func (f *fakeLeases) createContainer(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["createContainer"]++
	return nil
}

// breakLease breaks the current lease like Lease Blob "break" with period 0.
func (f *fakeLeases) breakLease(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.blobs[name]; b != nil && b.leaseID != "" {
		b.broken = true
	}
}

// heldBy returns the lease id on name ("" when free).
func (f *fakeLeases) heldBy(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.blobs[name]; b != nil && !b.broken {
		return b.leaseID
	}
	return ""
}

// newFakeLock returns a blob lease lock on api whose renewer never ticks by itself; tests
// drive renewAll directly. It is closed at cleanup.
func newFakeLock(t *testing.T, api *fakeLeases, opts Options) *BlobLeaseThreadLock {
	t.Helper()
	opts.api = api
	if opts.renewEvery == 0 {
		opts.renewEvery = 1 << 62
	}
	l, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}
