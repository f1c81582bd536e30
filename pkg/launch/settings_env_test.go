package launch_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestNewLogger_HonoursTheLogLevel: FUNCGRAPH_LOG_LEVEL sets the level; info when unset.
func TestNewLogger_HonoursTheLogLevel(t *testing.T) {
	ctx := context.Background()
	warn := launch.NewLogger(os.Stderr, env(map[string]string{"FUNCGRAPH_LOG_LEVEL": "warn"}))
	if warn.Enabled(ctx, slog.LevelInfo) || !warn.Enabled(ctx, slog.LevelWarn) {
		t.Error("FUNCGRAPH_LOG_LEVEL=warn: want warn on, info off")
	}
	if info := launch.NewLogger(os.Stderr, env(nil)); !info.Enabled(ctx, slog.LevelInfo) || info.Enabled(ctx, slog.LevelDebug) {
		t.Error("unset: want info on, debug off")
	}
}

// TestServerConfigFromEnv_UnsetIsZeroMalformedIsAnError: an unset setting stays zero, which
// funchost.NewServer reads as its default, and a malformed one is an error at startup.
func TestServerConfigFromEnv_UnsetIsZeroMalformedIsAnError(t *testing.T) {
	cfg, err := launch.ServerConfigFromEnv(env(map[string]string{"FUNCGRAPH_READ_HEADER_TIMEOUT": "5s"}))
	if err != nil || cfg.ReadHeaderTimeout != 5*time.Second || cfg.IdleTimeout != 0 {
		t.Errorf("ReadHeaderTimeout %v, IdleTimeout %v, err %v; want 5s, 0s, nil", cfg.ReadHeaderTimeout, cfg.IdleTimeout, err)
	}
	if _, err := launch.ServerConfigFromEnv(env(map[string]string{"FUNCGRAPH_IDLE_TIMEOUT": "soon"})); err == nil {
		t.Error("FUNCGRAPH_IDLE_TIMEOUT=soon was accepted")
	}
}

// TestNamesFor_EveryNameFromOnePrefix: FUNCGRAPH_STORAGE_PREFIX names every store.
func TestNamesFor_EveryNameFromOnePrefix(t *testing.T) {
	n, err := launch.NamesFor("shop")
	want := launch.Names{Prefix: "shop", RunsTable: "shopruns", WorkQueue: "shop-work", PayloadContainer: "shop-payloads",
		LiveContainer: "shop-live", ThreadsTable: "shopthreads", CheckpointContainer: "shop-checkpoints"}
	if err != nil || n != want {
		t.Errorf("NamesFor(shop) = %+v, %v; want %+v", n, err, want)
	}
}

// TestLoadKeys_FromTheEnvironment: the function key is the host-level "default" key.
func TestLoadKeys_FromTheEnvironment(t *testing.T) {
	keys, err := launch.LoadKeys(env(map[string]string{"FUNCGRAPH_FUNCTION_KEY": "fk", "FUNCGRAPH_MASTER_KEY": "mk"}))
	if err != nil || keys.HostFunction["default"] != "fk" || keys.Master != "mk" {
		t.Errorf("keys %+v, err %v", keys, err)
	}
}

// TestMemoryRetention_KeepsTheNewestThousand: the in-memory backend keeps the newest 1 000
// finished runs and no age limit unless FUNCGRAPH_MEMORY_MAX_RUNS or FUNCGRAPH_RETENTION say
// otherwise.
func TestMemoryRetention_KeepsTheNewestThousand(t *testing.T) {
	if r := launch.MemoryRetention(); r.MaxRuns != 1000 || r.MaxAge != 0 {
		t.Errorf("MemoryRetention() = %+v", r)
	}
}
