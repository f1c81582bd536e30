package bloblock

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// InfiniteLease as Options.LeaseDuration asks for leases that never expire. They are
// never renewed, and a crashed holder's lease must be broken by an operator. -1 * time.Second
// means the same.
const InfiniteLease time.Duration = -1

// DefaultLeaseDuration is the lease duration used when Options.LeaseDuration is 0.
const DefaultLeaseDuration = 60 * time.Second

// Options configures a BlobLeaseThreadLock. The zero value of every field but
// Container is a documented default.
type Options struct {
	// Container holds the marker blobs. Required. The container must already exist unless
	// CreateContainer is set; the lock never creates it on its own.
	Container *container.Client

	// CreateContainer makes New create Container when it is missing.
	CreateContainer bool

	// LeaseDuration is the lease length: whole seconds from 15 s to 60 s, or InfiniteLease.
	// 0 means DefaultLeaseDuration (60 s). Anything else is rejected by Validate.
	LeaseDuration time.Duration

	// BlobPrefix is prepended to every marker blob name. "" means DefaultBlobPrefix.
	BlobPrefix string

	// DisableAutoRenew turns off the background renewal of held leases (auto_renew=false in
	// the contract). With a finite LeaseDuration a lease can then expire mid-run and let another
	// instance take the same thread; construction logs a warning. Ignored for InfiniteLease.
	DisableAutoRenew bool

	// Logger receives lock diagnostics. Nil means slog.Default().
	Logger *slog.Logger

	// renewEvery overrides the renewal interval LeaseDuration/3 (for tests).
	renewEvery time.Duration
	// renewTimeout overrides the bound of one renewal call, renewEvery (for tests that renew
	// often on a loaded machine).
	renewTimeout time.Duration
}

// Validate reports whether the options can build a lock.
func (o Options) Validate() error {
	if o.Container == nil {
		return errors.New("blob lease lock needs a container client: the container must already exist, or set CreateContainer to create it")
	}
	if _, err := leaseSeconds(o.LeaseDuration); err != nil {
		return err
	}
	return nil
}

// leaseSeconds converts a LeaseDuration (0 = default) to the service's seconds value.
func leaseSeconds(d time.Duration) (int32, error) {
	switch {
	case d == 0:
		return int32(DefaultLeaseDuration / time.Second), nil
	case d == InfiniteLease || d == -time.Second:
		return -1, nil
	case d%time.Second == 0 && d >= 15*time.Second && d <= 60*time.Second:
		return int32(d / time.Second), nil
	}
	return 0, fmt.Errorf("lease_duration must be -1 (infinite) or between 15 and 60 seconds; got %s",
		strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
}
