package bloblock

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
)

// azureLeases is the part of Blob storage the lock uses, on an azblob container client.
type azureLeases struct{ c *container.Client }

func (a azureLeases) leaseClient(name, leaseID string) (*lease.BlobClient, error) {
	var opts *lease.BlobClientOptions
	if leaseID != "" {
		opts = &lease.BlobClientOptions{LeaseID: &leaseID}
	}
	return lease.NewBlobClient(a.c.NewBlobClient(name), opts)
}

// acquire takes a new lease on blob name and returns its id.
func (a azureLeases) acquire(ctx context.Context, name string, seconds int32) (string, error) {
	lc, err := a.leaseClient(name, "")
	if err != nil {
		return "", err
	}
	if _, err := lc.AcquireLease(ctx, seconds, nil); err != nil {
		return "", err
	}
	return *lc.LeaseID(), nil
}

func (a azureLeases) renew(ctx context.Context, name, leaseID string) error {
	lc, err := a.leaseClient(name, leaseID)
	if err != nil {
		return err
	}
	_, err = lc.RenewLease(ctx, nil)
	return err
}

func (a azureLeases) release(ctx context.Context, name, leaseID string) error {
	lc, err := a.leaseClient(name, leaseID)
	if err != nil {
		return err
	}
	_, err = lc.ReleaseLease(ctx, nil)
	return err
}

// createMarker creates blob name empty unless it exists (existing is not an error).
func (a azureLeases) createMarker(ctx context.Context, name string) error {
	etagAny := azcore.ETagAny
	_, err := a.c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(nil)),
		&blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &etagAny},
		}})
	// 409 BlobAlreadyExists, or 412 when it exists and is leased: either way it is there.
	if status := azsdk.Classify(err).Status; status == http.StatusConflict || status == http.StatusPreconditionFailed {
		return nil
	}
	return err
}

// createContainer creates the container unless it exists.
func (a azureLeases) createContainer(ctx context.Context) error {
	return azsdk.CreateContainer(ctx, a.c)
}

// isLeaseConflict reports whether an acquire failed because someone else holds the lease:
// a storage code starting with "lease" (any case) or any 409.
func isLeaseConflict(err error) bool {
	a := azsdk.Classify(err)
	return a.Status == http.StatusConflict || strings.HasPrefix(strings.ToLower(a.Code), "lease")
}

// isBlobNotFound reports whether the marker blob is missing (not the container).
func isBlobNotFound(err error) bool { return azsdk.Classify(err).Kind == azsdk.NotFound }

// isDefinitiveLoss reports whether a renewal error proves the lease is lost: a code saying
// the lease is not ours (azsdk.LeaseLost) or any 412.
func isDefinitiveLoss(err error) bool {
	a := azsdk.Classify(err)
	return a.Kind == azsdk.LeaseLost || a.Status == http.StatusPreconditionFailed
}
