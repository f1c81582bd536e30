package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// Settings read from the environment (app settings under the Functions host).
const (
	envLockBackend   = "GRAPH_LOCK_BACKEND"
	envStorage       = "AzureWebJobsStorage"
	envLockContainer = "FUNCGRAPH_LOCK_CONTAINER"
	envFunctionKey   = "FUNCGRAPH_FUNCTION_KEY"
	envMasterKey     = "FUNCGRAPH_MASTER_KEY"
	envKeysFile      = "FUNCGRAPH_KEYS_FILE"
)

// errDistributedNeedsStorage is the fail-fast message for a distributed lock without storage.
var errDistributedNeedsStorage = errors.New(envLockBackend + "=distributed needs the " + envStorage +
	" connection string (a storage account or UseDevelopmentStorage=true for Azurite); set it or unset " + envLockBackend)

// buildApp builds the example app from the environment. GRAPH_LOCK_BACKEND=distributed opens a
// Blob lease lock on the AzureWebJobsStorage account (container FUNCGRAPH_LOCK_CONTAINER,
// default funcgraph-locks, created if missing); any other value is checked by the hosting app.
func buildApp(ctx context.Context, getenv func(string) string, logger *slog.Logger) (*exampleapp.App, error) {
	setting := getenv(envLockBackend)
	cfg := exampleapp.Config{Logger: logger, LockBackendSetting: setting}
	var blob *lock.BlobLeaseThreadLock
	if strings.ToLower(strings.TrimSpace(setting)) == "distributed" {
		conn := getenv(envStorage)
		if conn == "" {
			return nil, errDistributedNeedsStorage
		}
		container := cmp.Or(getenv(envLockContainer), lock.DefaultLockContainer)
		var err error
		blob, err = lock.OpenBlobLease(ctx, conn, container, lock.BlobLeaseOptions{Logger: logger.With("component", "lock")})
		if err != nil {
			return nil, fmt.Errorf("open distributed thread lock: %w", err)
		}
		cfg.ThreadLock = blob
		logger.Info("thread lock: blob leases", "container", container)
	}
	app, err := exampleapp.Build(cfg)
	if err != nil {
		if blob != nil {
			_ = blob.Close()
		}
		return nil, err
	}
	if blob != nil {
		app.OnClose(blob.Close)
	}
	return app, nil
}

// loadKeys reads the standalone server's keys: FUNCGRAPH_KEYS_FILE, plus FUNCGRAPH_FUNCTION_KEY
// (a host-level function key) and FUNCGRAPH_MASTER_KEY.
func loadKeys(getenv func(string) string) (funchost.Keys, error) {
	var keys funchost.Keys
	if path := getenv(envKeysFile); path != "" {
		k, err := funchost.LoadKeysFile(path)
		if err != nil {
			return keys, err
		}
		keys = k
	}
	if v := getenv(envFunctionKey); v != "" {
		if keys.HostFunction == nil {
			keys.HostFunction = map[string]string{}
		}
		keys.HostFunction["default"] = v
	}
	if v := getenv(envMasterKey); v != "" {
		keys.Master = v
	}
	return keys, nil
}
