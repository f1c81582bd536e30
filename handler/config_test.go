package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
