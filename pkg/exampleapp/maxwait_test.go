package exampleapp_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestLaunch_MaxWait: the wait bound of the settings (FUNCGRAPH_MAX_WAIT) reaches the routes: a
// run longer than it answers 504 naming it.
func TestLaunch_MaxWait(t *testing.T) {
	app, err := exampleapp.Launch(t.Context(), launch.Settings{Logger: slog.New(slog.DiscardHandler), MaxWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	tr := funchosttest.Transports(t, app.FunctionApp)[0]
	status, body := do(t, tr, "POST", "/api/runs/wait",
		`{"assistant_id":"echo_agent","input":{"messages":[]},"config":{"configurable":{"delay_ms":5000}}}`)
	if status != 504 || !strings.Contains(body, "within 0.3 s") {
		t.Fatalf("a run past the bound: %d %s; want 504 within 0.3 s", status, body)
	}
}
