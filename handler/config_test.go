package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestBuildApp_LockBackend(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr error
		wantMsg string
	}{
		{name: "unset", env: nil},
		{name: "inprocess", env: map[string]string{envLockBackend: " InProcess "}},
		{name: "distributed without storage", env: map[string]string{envLockBackend: "distributed"},
			wantErr: errDistributedNeedsStorage, wantMsg: "needs the AzureWebJobsStorage connection string"},
		{name: "other backend with the in-process lock", env: map[string]string{envLockBackend: " Redis "},
			wantErr: host.ErrLockBackendMismatch,
			wantMsg: "GRAPH_LOCK_BACKEND='redis' requires a distributed thread_lock backend (for example BlobLeaseThreadLock), but the app is still using the default InProcessThreadLock. Pass thread_lock explicitly or unset GRAPH_LOCK_BACKEND for local dev."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app, err := buildApp(t.Context(), envOf(tc.env), discard())
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("buildApp: %v", err)
				}
				if err := app.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.wantMsg)
			}
		})
	}
}

func TestLoadKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(file, []byte(`{"masterKey":{"name":"master","value":"from-file"},"functionKeys":[{"name":"ci","value":"fk"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := loadKeys(envOf(map[string]string{envKeysFile: file, envFunctionKey: "env-fk", envMasterKey: "env-master"}))
	if err != nil {
		t.Fatal(err)
	}
	if keys.Master != "env-master" || keys.HostFunction["ci"] != "fk" || keys.HostFunction["default"] != "env-fk" {
		t.Fatalf("keys = %+v", keys)
	}
	if _, err := loadKeys(envOf(map[string]string{envKeysFile: filepath.Join(t.TempDir(), "missing.json")})); err == nil {
		t.Fatal("missing keys file: want an error")
	}
}

func TestRun_FunctionsSubcommand_WritesFolders(t *testing.T) {
	out := t.TempDir()
	if err := run(context.Background(), []string{"functions", "--out", out}, envOf(nil), discard()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "fg_health", "function.json")); err != nil {
		t.Fatalf("fg_health not written: %v", err)
	}
	if err := run(context.Background(), []string{"bogus"}, envOf(nil), discard()); err == nil {
		t.Fatal("unknown subcommand: want an error")
	}
}

// TestRun_Serve_AnswersAndShutsDown serves the standalone app on a free port, checks health
// and a keyed route, then cancels the context (as SIGTERM does) and expects a clean stop.
func TestRun_Serve_AnswersAndShutsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := envOf(map[string]string{envFunctionKey: "k1"})
	go func() { done <- run(ctx, []string{"serve", "--addr", addr}, env, discard()) }()
	get := func(path, key string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if key != "" {
			req.Header.Set("x-functions-key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for get("/api/health", "") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("server did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := get("/api/health/details", ""); code != http.StatusUnauthorized {
		t.Errorf("health/details without key = %d, want 401", code)
	}
	if code := get("/api/health/details", "k1"); code != http.StatusOK {
		t.Errorf("health/details with key = %d, want 200", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}
