package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// DefaultLockContainer is a suggested container name for marker blobs.
const DefaultLockContainer = "funcgraph-locks"

// Development storage (Azurite) defaults for "UseDevelopmentStorage=true". The key is the
// public, well-known emulator key, not a secret.
const (
	devAccountName = "devstoreaccount1"
	devAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devBlobHost    = "http://127.0.0.1"
	devBlobPort    = "10000"
)

// OpenBlobLease builds a BlobLeaseThreadLock from a storage connection string (as in
// AzureWebJobsStorage, including "UseDevelopmentStorage=true" for a local Azurite) and a
// container name, creating the container if it is missing. opts.Container and
// opts.CreateContainer are set by OpenBlobLease. Errors never contain the connection string.
func OpenBlobLease(ctx context.Context, connectionString, containerName string, opts BlobLeaseOptions) (*BlobLeaseThreadLock, error) {
	if strings.TrimSpace(connectionString) == "" {
		return nil, errors.New("open blob lease lock: the storage connection string is empty")
	}
	if err := validContainerName(containerName); err != nil {
		return nil, fmt.Errorf("open blob lease lock: %w", err)
	}
	c, err := container.NewClientFromConnectionString(expandDevelopmentStorage(connectionString), containerName, nil)
	if err != nil {
		// The SDK's parse errors describe the format, never the value.
		return nil, fmt.Errorf("open blob lease lock: parse storage connection string: %w", err)
	}
	opts.Container = c
	opts.CreateContainer = true
	l, err := NewBlobLeaseThreadLock(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("open blob lease lock on container %q: %w", containerName, err)
	}
	return l, nil
}

// expandDevelopmentStorage rewrites "UseDevelopmentStorage=true" (optionally with
// DevelopmentStorageProxyUri) to the explicit Azurite account; other strings are returned
// unchanged.
func expandDevelopmentStorage(cs string) string {
	var dev bool
	host := devBlobHost
	for _, part := range strings.Split(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case strings.EqualFold(k, "UseDevelopmentStorage"):
			dev = strings.EqualFold(strings.TrimSpace(v), "true")
		case strings.EqualFold(k, "DevelopmentStorageProxyUri"):
			host = strings.TrimRight(strings.TrimSpace(v), "/")
		}
	}
	if !dev {
		return cs
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s:%s/%s;",
		devAccountName, devAccountKey, host, devBlobPort, devAccountName)
}

// validContainerName checks Azure's container naming rules: 3–63 characters of lowercase
// letters, digits and single hyphens, starting and ending with a letter or digit.
func validContainerName(name string) error {
	bad := len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' ||
		strings.Contains(name, "--")
	for i := 0; i < len(name) && !bad; i++ {
		c := name[i]
		bad = !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-')
	}
	if bad {
		return fmt.Errorf("invalid container name %q: use 3-63 lowercase letters, digits and single hyphens", name)
	}
	return nil
}
