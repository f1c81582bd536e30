package launch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// TestHostJSON_RepositoryHostJSONIsTheTemplate fails when the repository's host.json drifts
// from the built-in template (`go run ./handler hostjson` rewrites it).
func TestHostJSON_RepositoryHostJSONIsTheTemplate(t *testing.T) {
	repo, err := os.ReadFile(filepath.Join("..", "..", "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := launch.HostJSON("funcgraph", "api", true)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(repo) {
		t.Fatalf("host.json differs from launch.HostJSON(\"funcgraph\", \"api\", true) (run `go run ./handler hostjson`):\n%s", got)
	}
}

// TestHostJSON_AgreesWithTheEngine reads the template as the host does and compares its queue
// settings with the engine's.
func TestHostJSON_AgreesWithTheEngine(t *testing.T) {
	data, err := launch.HostJSON("myapp", "", true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := funchosttest.ParseHostConfig(data)
	if err != nil {
		t.Fatalf("the host would not read it: %v", err)
	}
	eng, err := engine.New(engine.Options{Registry: durable.NewRegistry(), Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if got, want := int64(cfg.MaxDequeueCount), eng.Options().MaxDequeueCount; got != want {
		t.Errorf("queues.maxDequeueCount = %d, the engine's MaxDequeueCount = %d: a poison item would vanish into <queue>-poison instead of failing its run", got, want)
	}
	// The deliveries of a failing item span (maxDequeueCount-1) × visibilityTimeout; they
	// must outlast a 30 s storage outage several times over.
	if span := time.Duration(cfg.MaxDequeueCount-1) * cfg.Queues.VisibilityTimeout; span < 4*30*time.Second {
		t.Errorf("deliveries span %v, want at least 2m0s", span)
	}
	if cfg.Queues.MaxPolling() != 2*time.Second || cfg.MessageEncoding != "base64" {
		t.Errorf("maxPollingInterval %v, messageEncoding %q; want 2s and base64 (the engine writes base64)", cfg.Queues.MaxPolling(), cfg.MessageEncoding)
	}
	if cfg.ExecutablePath != "myapp" || cfg.RoutePrefix != "" || cfg.Forwarding || !cfg.Proxying || cfg.FunctionTimeout != launch.HostFunctionTimeout {
		t.Errorf("config %+v", cfg)
	}
	if eng.Options().StepBudget >= cfg.FunctionTimeout/2 {
		t.Errorf("the engine's StepBudget %v is not well below functionTimeout %v", eng.Options().StepBudget, cfg.FunctionTimeout)
	}
}

func TestHostJSON_RefusesAPathAsExecutable(t *testing.T) {
	for _, exe := range []string{"", "bin/app", `a\b`, ".."} {
		if _, err := launch.HostJSON(exe, "api", true); err == nil {
			t.Errorf("HostJSON(%q) succeeded", exe)
		}
	}
}

func TestRun_HostJSONSubcommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "host.json")
	var started bool
	var closed int
	err := launch.Run(t.Context(), tinyApp(&started, &closed), launch.Options{Args: []string{"hostjson", "--out", out}, Getenv: envOf(nil), Logger: discard(), Program: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, _ := launch.HostJSON("tiny", "api", true)
	if string(got) != string(want) || started || closed != 1 {
		t.Fatalf("out = %s (started %v, closed %d)", got, started, closed)
	}
}

// Every wait bound a route can be given stays below the functionTimeout the staged host.json
// sets, so a route answers before the host would restart the handler.
func TestHostJSON_FunctionTimeoutAboveEveryWaitBound(t *testing.T) {
	if launch.HostFunctionTimeout <= funchost.FrontEndTimeout || launch.HostFunctionTimeout <= host.DefaultMaxWait {
		t.Fatalf("functionTimeout %v must exceed the longest wait bound (%v, default %v)", launch.HostFunctionTimeout, funchost.FrontEndTimeout, host.DefaultMaxWait)
	}
}

// TestHostJSON_WhatStageWrites: the executable's name, and queue settings that agree with the
// engine.
func TestHostJSON_WhatStageWrites(t *testing.T) {
	data, err := launch.HostJSON("myapp", "api", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"defaultExecutablePath": "myapp",`, `"visibilityTimeout": "00:00:30",`, `"maxDequeueCount": 5`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("host.json lacks %s:\n%s", want, data)
		}
	}
	if _, err := launch.HostJSON("bin/myapp", "api", true); err == nil {
		t.Error("an executable path with a folder was accepted")
	}
}

// TestStepLeaseFrom_FunctionTimeoutOfTheAppRoot: under the Functions host the engine's step
// lease is host.json's functionTimeout, past which the host kills a handling; the built-in
// host.json's 10 minutes when the file is missing or sets none, or no limit.
func TestStepLeaseFrom_FunctionTimeoutOfTheAppRoot(t *testing.T) {
	t.Parallel()
	builtIn, err := launch.HostJSON("funcgraph", "api", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body string
		want       time.Duration
	}{
		{"built-in", string(builtIn), launch.HostFunctionTimeout},
		{"short", `{"functionTimeout": "00:00:02"}`, 2 * time.Second},
		{"fraction", `{"functionTimeout": "00:00:01.5"}`, 1500 * time.Millisecond},
		{"days", `{"functionTimeout": "1.02:03:04"}`, 26*time.Hour + 3*time.Minute + 4*time.Second},
		{"no limit", `{"functionTimeout": "-1"}`, launch.HostFunctionTimeout},
		{"none", `{"version": "2.0"}`, launch.HostFunctionTimeout},
		{"malformed", `{"functionTimeout": "00:61:00"}`, launch.HostFunctionTimeout},
		{"not JSON", `functionTimeout`, launch.HostFunctionTimeout},
	} {
		path := filepath.Join(t.TempDir(), "host.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := launch.StepLeaseFrom(path); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := launch.StepLeaseFrom(filepath.Join(t.TempDir(), "missing.json")); got != launch.HostFunctionTimeout {
		t.Errorf("missing: %v", got)
	}
}
