//go:build integration

package launch_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationFromEnv_DistributedLock reads GRAPH_LOCK_BACKEND=distributed on Azurite: the
// settings carry a Blob lease lock, whose container is created.
func TestIntegrationFromEnv_DistributedLock(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	container := azuritetest.UniqueName("locks")
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		"GRAPH_LOCK_BACKEND":       "distributed",
		launch.EnvStorage:          conn,
		"FUNCGRAPH_LOCK_CONTAINER": container,
		launch.EnvStoragePrefix:    azuritetest.UniqueName("t"),
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if s.ThreadLock == nil {
		t.Fatal("ThreadLock is nil, want the blob lease lock")
	}
	client, err := azblob.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ServiceClient().NewContainerClient(container).GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("lock container %q was not created: %v", container, err)
	}
}

// TestIntegrationRun_DistributedLock_BypassFailsAtStartup (issue #21): with
// GRAPH_LOCK_BACKEND=distributed, an app whose hosting app was built without the settings'
// lock (host.New(host.Options{}) reads no environment) stops serve before it listens; one
// built with it serves.
func TestIntegrationRun_DistributedLock_BypassFailsAtStartup(t *testing.T) {
	env := envOf(map[string]string{
		"GRAPH_LOCK_BACKEND":       "distributed",
		launch.EnvStorage:          azuritetest.ConnectionString(t),
		"FUNCGRAPH_LOCK_CONTAINER": azuritetest.UniqueName("locks"),
		launch.EnvStoragePrefix:    azuritetest.UniqueName("t"),
	})
	build := func(useSettings bool, started *bool) launch.Builder {
		return func(_ context.Context, s launch.Settings) (*launch.App, error) {
			opts := host.Options{Logger: s.Logger}
			if useSettings {
				opts.ThreadLock = s.ThreadLock
			}
			h, err := host.New(opts)
			if err != nil {
				return nil, err
			}
			return &launch.App{FunctionApp: h.FunctionApp(), Start: func(context.Context) error { *started = true; return nil }}, nil
		}
	}
	var started bool
	err := launch.Run(t.Context(), build(false, &started), launch.Options{
		Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: env, Logger: discard()})
	if !errors.Is(err, launch.ErrLockNotFromSettings) || started {
		t.Fatalf("bypassed lock: err = %v, started %v; want ErrLockNotFromSettings before starting", err, started)
	}
	ctx, cancel := context.WithCancel(t.Context())
	err = launch.Run(ctx, build(true, &started), launch.Options{
		Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: env, Logger: discard(),
		OnListen: func(net.Addr) { cancel() }})
	if err != nil || !started {
		t.Fatalf("the settings' lock: err = %v, started %v; want it served", err, started)
	}
}
