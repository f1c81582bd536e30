package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

// leaseAPI is the part of Blob storage the lock uses. azureLeases implements it; unit tests
// substitute a fake.
type leaseAPI interface {
	// acquire takes a new lease on blob and returns its id.
	acquire(ctx context.Context, blob string, seconds int32) (leaseID string, err error)
	renew(ctx context.Context, blob, leaseID string) error
	release(ctx context.Context, blob, leaseID string) error
	// createMarker creates blob empty unless it exists (existing is not an error).
	createMarker(ctx context.Context, blob string) error
	// createContainer creates the container unless it exists.
	createContainer(ctx context.Context) error
}

// azureLeases is leaseAPI on an azblob container client.
type azureLeases struct{ c *container.Client }

func (a azureLeases) leaseClient(name, leaseID string) (*lease.BlobClient, error) {
	var opts *lease.BlobClientOptions
	if leaseID != "" {
		opts = &lease.BlobClientOptions{LeaseID: &leaseID}
	}
	return lease.NewBlobClient(a.c.NewBlobClient(name), opts)
}

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

func (a azureLeases) createMarker(ctx context.Context, name string) error {
	etagAny := azcore.ETagAny
	_, err := a.c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(nil)),
		&blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &etagAny},
		}})
	// 409 BlobAlreadyExists, or 412 when it exists and is leased: either way it is there.
	if status, _ := storageCode(err); status == http.StatusConflict || status == http.StatusPreconditionFailed {
		return nil
	}
	return err
}

func (a azureLeases) createContainer(ctx context.Context) error {
	_, err := a.c.Create(ctx, nil)
	if _, code := storageCode(err); strings.EqualFold(code, "ContainerAlreadyExists") {
		return nil
	}
	return err
}

// storageCode returns the HTTP status and storage error code of a service error, or zeros.
func storageCode(err error) (status int, code string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

// isLeaseConflict reports whether an acquire failed because someone else holds the lease:
// a storage code starting with "lease" or any 409.
func isLeaseConflict(err error) bool {
	status, code := storageCode(err)
	return status == http.StatusConflict || strings.HasPrefix(strings.ToLower(code), "lease")
}

// isBlobNotFound reports whether the marker blob is missing (not the container).
func isBlobNotFound(err error) bool {
	_, code := storageCode(err)
	return strings.EqualFold(code, "BlobNotFound")
}

// definitiveLossCodes are renewal errors after which the lease is certainly not ours.
var definitiveLossCodes = []string{
	"LeaseLost", "LeaseIdMismatchWithLeaseOperation", "LeaseNotPresentWithLeaseOperation", "LeaseIdMissing",
}

// isDefinitiveLoss reports whether a renewal error proves the lease is lost (any 412 too).
func isDefinitiveLoss(err error) bool {
	status, code := storageCode(err)
	if status == http.StatusPreconditionFailed {
		return true
	}
	for _, c := range definitiveLossCodes {
		if strings.EqualFold(code, c) {
			return true
		}
	}
	return false
}

// errorSummary describes err for logs without request URLs (which may carry a SAS).
func errorSummary(err error) string {
	if status, code := storageCode(err); status != 0 {
		return fmt.Sprintf("status=%d code=%s", status, code)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return fmt.Sprintf("transport error (%T)", err)
}
