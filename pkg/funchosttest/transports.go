package funchosttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Transport is one way to reach an app in tests.
type Transport struct {
	// Name is "standalone" or "emulated-host".
	Name string
	// BaseURL is scheme://host:port without the route prefix, e.g. BaseURL + "/api/health".
	BaseURL string
	// FunctionKey is a host-level function key valid on this transport.
	FunctionKey string
	// MasterKey is the master key of this transport.
	MasterKey string
}

// Transport names (Transport.Name).
const (
	// TransportStandalone is the app's standalone server (funchost's Standalone).
	TransportStandalone = "standalone"
	// TransportEmulatedHost is the custom handler behind the emulated Functions host.
	TransportEmulatedHost = "emulated-host"
)

// Transports serves app behind both transports for the life of the test and returns
// [standalone, emulated-host]. Both listen on 127.0.0.1 and enforce keys (the emulator in
// AuthEnforced mode) with the same generated function and master keys. Everything is closed
// by t.Cleanup.
func Transports(t testing.TB, app *funchost.FunctionApp) []Transport {
	t.Helper()
	return TransportsConfig(t, app, funchost.ServerConfig{})
}

// TransportsConfig is Transports with the server configuration the binary would read from
// its settings: the standalone server and the emulated host's custom handler are each served
// on a funchost.Server with cfg (a zero ShutdownTimeout is 5 s). The emulated host's own
// front keeps its defaults, as the Functions host's does.
func TransportsConfig(t testing.TB, app *funchost.FunctionApp, cfg funchost.ServerConfig) []Transport {
	t.Helper()
	functionKey, masterKey := randomKey(t), randomKey(t)
	keys := funchost.Keys{Master: masterKey, HostFunction: map[string]string{"default": functionKey}}
	logger := TestLogger(t)
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}

	// The standalone server as the binary serves it: funchost.Server with cfg.
	standaloneURL := Serve(t, cfg, app.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger}))

	emu := StartApp(t, app, Options{Keys: keys, AuthMode: AuthEnforced, HandlerServer: cfg})
	return []Transport{
		{Name: TransportStandalone, BaseURL: standaloneURL, FunctionKey: functionKey, MasterKey: masterKey},
		{Name: TransportEmulatedHost, BaseURL: emu.URL(), FunctionKey: functionKey, MasterKey: masterKey},
	}
}

// StartApp runs app behind the emulator for the life of the test, for HTTP contract tests of
// a funchost.FunctionApp: it writes the app's function.json folders, a host.json (route prefix
// of the app, forwarding off, base64 queue messages) and a local.settings.json with the app
// settings its bindings read (funchost.FunctionApp.AppSettings) into a temporary app root,
// serves app.CustomHandler in-process (on a funchost.Server with opts.HandlerServer), and
// closes everything in t.Cleanup. opts.AppRoot and
// Handler are ignored; Logf defaults to t.Logf. A test of what a user deploys starts the
// staged folder with Start instead.
func StartApp(t testing.TB, app *funchost.FunctionApp, opts Options) *Emulator {
	t.Helper()
	root := t.TempDir()
	if err := app.WriteFunctions(root); err != nil {
		t.Fatalf("funchosttest: %v", err)
	}
	if err := WriteHostJSON(root, app.RoutePrefix()); err != nil {
		t.Fatalf("funchosttest: %v", err)
	}
	values := map[string]string{"FUNCTIONS_WORKER_RUNTIME": "custom"}
	for _, s := range app.AppSettings() {
		values[s.Name] = s.Value
	}
	settings, err := json.MarshalIndent(map[string]any{"IsEncrypted": false, "Values": values}, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(root, "local.settings.json"), append(settings, '\n'), 0o644)
	}
	if err != nil {
		t.Fatalf("funchosttest: write local.settings.json: %v", err)
	}
	opts.AppRoot = root
	opts.Handler = app.CustomHandler(funchost.HandlerOptions{Logger: TestLogger(t)})
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	emu, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("funchosttest: %v", err)
	}
	t.Cleanup(func() {
		if err := emu.Close(); err != nil {
			t.Errorf("funchosttest: close emulator: %v", err)
		}
	})
	return emu
}

// Serve runs h on a funchost.Server with cfg on a loopback port for the life of the test and
// returns its base URL (http://127.0.0.1:<port>). The server is shut down by t.Cleanup, and
// an error from Serve fails the test.
func Serve(t testing.TB, cfg funchost.ServerConfig, h http.Handler) string {
	t.Helper()
	logger := TestLogger(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("funchosttest: listen: %v", err)
	}
	srv, err := funchost.NewServer(cfg, h, logger)
	if err != nil {
		_ = ln.Close()
		t.Fatalf("funchosttest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("funchosttest: server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// WriteHostJSON writes a minimal custom-handler host.json into dir: executable "handler",
// forwarding off, the given route prefix and base64 queue messages.
func WriteHostJSON(dir, routePrefix string) error {
	host := map[string]any{
		"version": "2.0",
		"customHandler": map[string]any{
			"description":                 map[string]any{"defaultExecutablePath": "handler", "workingDirectory": "", "arguments": []string{}},
			"enableForwardingHttpRequest": false,
		},
		"extensions": map[string]any{
			"http":   map[string]any{"routePrefix": routePrefix},
			"queues": map[string]any{"messageEncoding": "base64"},
		},
	}
	data, err := json.MarshalIndent(host, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "host.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return nil
}

func randomKey(t testing.TB) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("funchosttest: generate key: %v", err)
	}
	return hex.EncodeToString(b)
}

// TestLogger returns a slog.Logger that writes through t.Log.
func TestLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
