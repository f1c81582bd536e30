package bloblock

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/azure"
)

// DefaultContainer is a suggested container name for marker blobs.
const DefaultContainer = "funcgraph-locks"

// Open builds a BlobLeaseThreadLock on the container containerName of the account clients
// reach, creating the container if it is missing (azure.Clients.EnsureContainer). The clients
// are the ones every other Azure store of the app is opened from, so a connection string,
// "UseDevelopmentStorage=true" and identity-based settings all work. opts.Container and
// opts.CreateContainer are set by Open. Errors never contain a key or a SAS.
func Open(ctx context.Context, clients *azure.Clients, containerName string, opts Options) (*BlobLeaseThreadLock, error) {
	if clients == nil {
		return nil, errors.New("open blob lease lock: no storage clients")
	}
	c, err := clients.EnsureContainer(ctx, containerName)
	if err != nil {
		return nil, fmt.Errorf("open blob lease lock: %w", err)
	}
	opts.Container = c
	opts.CreateContainer = false
	l, err := New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("open blob lease lock on container %q: %w", containerName, err)
	}
	return l, nil
}
