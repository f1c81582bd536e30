//go:build integration

package platformruns_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// azureInstance is the example app on Azure storage under prefix, as `serve` runs it with
// AzureWebJobsStorage set: threads in tables, checkpoints and payloads in blobs, background
// runs on the engine with its own dispatcher.
func azureInstance(t *testing.T, prefix string) *exampleapp.App {
	t.Helper()
	env := map[string]string{launch.EnvStorage: azuritetest.ConnectionString(t), launch.EnvStoragePrefix: prefix}
	logger := slog.New(slog.DiscardHandler)
	s, err := launch.FromEnv(t.Context(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !s.Durable.Azure {
		t.Fatal("FromEnv did not pick the Azure backends")
	}
	app, err := exampleapp.Build(exampleapp.Config{Logger: logger, Durable: s.Durable, PlatformThreads: s.Threads, Checkpointer: s.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	return app
}

// TestIntegrationStreams_TwoInstancesOnAzure_BothTransports: on Azure storage, a single
// messages-tuple stream on echo_agent, and background runs' streams joined on the instance
// that took the request and on another one (the run executes on either: their dispatchers
// share the work queue), after the run and while it goes on; the stream's blobs go with the
// purged run.
func TestIntegrationStreams_TwoInstancesOnAzure_BothTransports(t *testing.T) {
	prefix := azuritetest.UniqueName("js")
	a, b := azureInstance(t, prefix), azureInstance(t, prefix)
	others := funchosttest.Transports(t, b.FunctionApp)
	for i, tr := range funchosttest.Transports(t, a.FunctionApp) {
		t.Run(tr.Name, func(t *testing.T) { checkEchoStreams(t, tr, others[i], a.Engine) })
	}
}
