//go:build integration

package exampleapp_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationIsolation_ThreadRunMapping_BothTransports: the mapping attacks on a
// durable thread's run, on Azurite (threads in Azure Tables, the engine on Tables, Queues and
// Blobs), through both transports.
func TestIntegrationIsolation_ThreadRunMapping_BothTransports(t *testing.T) {
	threadRunMappingCases(t, isolatedAzureApp(t))
}

// isolatedAzureApp is azureApp with per-user isolation on, the identity header believed from
// loopback.
func isolatedAzureApp(t *testing.T) []funchosttest.Transport {
	t.Helper()
	env := map[string]string{
		launch.EnvStorage:           azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix:     azuritetest.UniqueName("i"),
		"FUNCGRAPH_USER_ISOLATION":  "on",
		"FUNCGRAPH_IDENTITY_HEADER": "X-MS-CLIENT-PRINCIPAL-ID",
		"FUNCGRAPH_TRUSTED_PROXIES": "127.0.0.1/32",
	}
	s, err := launch.FromEnv(t.Context(), func(k string) string { return env[k] }, launch.ModeServe, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !s.Durable.Azure {
		t.Fatal("FromEnv did not pick the Azure backends")
	}
	app, err := exampleapp.Launch(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	return funchosttest.Transports(t, app.FunctionApp)
}
