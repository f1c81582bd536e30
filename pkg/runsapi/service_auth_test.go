package runsapi_test

import (
	"bytes"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"log/slog"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

func TestService_OwnAppWithoutAuthLevel_IsAnonymousAndWarns(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	reg := runsapitest.Registry(t, examples.All)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
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
	if got := runsapitest.AuthLevels(t, app)[runsapi.FuncStartGraphRun]; got != "anonymous" {
		t.Fatalf("authLevel %q, want anonymous (the runs API's default; parity: docs/lineage.md)", got)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\""+runsapi.AnonymousWarning) {
		t.Fatalf("no warning; logs:\n%s", logs.String())
	}
}
