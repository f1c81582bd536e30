package runsapi_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// authOf returns the authLevel of every run function's function.json.
func authOf(t *testing.T, app *funchost.FunctionApp) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{runsapi.FuncStartGraphRun, runsapi.FuncCancelRun, runsapi.FuncSendRunEvent, runsapi.FuncGetRunStatus,
		runsapi.FuncListRuns, runsapi.FuncGetRunHistory, runsapi.FuncPurgeRun} {
		fj, ok := app.FunctionJSONs()[name]
		if !ok {
			t.Fatalf("no function.json for %s", name)
		}
		out[name] = fj.Bindings[0].AuthLevel
	}
	return out
}

func TestMount_WithoutAuthLevel_InheritsTheHostingApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		hostAuth funchost.AuthLevel
		svcAuth  funchost.AuthLevel
		want     string
		warns    bool
	}{
		{"host default is function", "", "", "function", false},
		{"host admin", funchost.AuthAdmin, "", "admin", false},
		{"explicit service level wins", "", funchost.AuthAdmin, "admin", false},
		{"explicit anonymous warns", "", funchost.AuthAnonymous, "anonymous", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			h, err := host.New(host.Options{AuthLevel: tt.hostAuth, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			reg := exampleRegistry(t)
			eng, err := engine.NewEngine(engine.EngineOptions{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
			if err != nil {
				t.Fatal(err)
			}
			svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: tt.svcAuth, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Mount(h, runsapi.MountOptions{}); err != nil {
				t.Fatal(err)
			}
			for name, got := range authOf(t, h.FunctionApp()) {
				if got != tt.want {
					t.Errorf("%s authLevel %q, want %q", name, got, tt.want)
				}
			}
			if warned := strings.Contains(logs.String(), runsapi.AnonymousWarning); warned != tt.warns {
				t.Errorf("warned %v, want %v; logs:\n%s", warned, tt.warns, logs.String())
			}
		})
	}
}

func TestService_OwnAppWithoutAuthLevel_IsAnonymousAndWarns(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	reg := exampleRegistry(t)
	eng, err := engine.NewEngine(engine.EngineOptions{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), runsapi.AnonymousWarning) {
		t.Fatal("warned before the level took effect")
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	if got := authOf(t, app)[runsapi.FuncStartGraphRun]; got != "anonymous" {
		t.Fatalf("authLevel %q, want anonymous (the original's default)", got)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\""+runsapi.AnonymousWarning) {
		t.Fatalf("no warning; logs:\n%s", logs.String())
	}
}
