//go:build integration

package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationFoldState_LargeUpdatesOnAzureStorage: on Azurite, a reducer graph whose
// updates are past the table's inline limit stores them in the payload store, and the state
// folded from the history read back is the run's final state.
func TestIntegrationFoldState_LargeUpdatesOnAzureStorage(t *testing.T) {
	env := map[string]string{launch.EnvStorage: azuritetest.ConnectionString(t), launch.EnvStoragePrefix: azuritetest.UniqueName("fold")}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := launch.FromEnv(context.Background(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil || !s.Durable.Azure {
		t.Fatalf("FromEnv: %v (Azure %v)", err, err == nil && s.Durable.Azure)
	}
	g := bigMessagesGraph(t, "fold-azure", 40000, 3)
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(s.Durable.EngineOptions(engine.Options{Registry: reg, Logger: logger, SweepInterval: -1, PollInterval: 20 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		_ = s.Close()
		_, _ = s.Azure.Tables.NewClient(s.Names.RunsTable).Delete(context.Background(), nil)
	})
	run, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "fold-azure", Input: json.RawMessage(`{"messages":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if run, err = e.WaitRun(ctx, run.InstanceID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() }); err != nil || run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run %s, %v", run.RuntimeStatus, err)
	}
	page, err := e.History(ctx, run.InstanceID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	states, err := engine.FoldStates(page.Events)
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, ev := range page.Events {
		if ev.Type == engine.HistoryNodeCompleted && bytes.HasPrefix(ev.Data, []byte(`{"update":{"messages":{"keep":`)) && len(ev.Data) > 40000 {
			updates++
		}
	}
	var out struct {
		State json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil || updates != 3 || !bytes.Equal(states[len(states)-1], out.State) {
		t.Fatalf("%d large update rows; folded %d bytes, output state %d bytes (%v)", updates, len(states[len(states)-1]), len(out.State), err)
	}
}
