package launch

import (
	"context"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"log/slog"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestEmbeddedDefault_LoadLoop_RowCountBounded is the bounded load loop on the embedded
// default (Durable.OrMemory with its dispatcher running): rounds of runs started and
// finished, each followed by the repair pass, leave the in-memory store's row count flat once
// memoryMaxRuns finished runs are kept — the count of rows, not of runs ever started.
func TestEmbeddedDefault_LoadLoop_RowCountBounded(t *testing.T) {
	const perRound, rounds = 250, 8 // 2 000 runs, twice memoryMaxRuns
	d := (Durable{}).OrMemory()
	eo := d.EngineOptions(engine.Options{SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	eo.Registry = runsapitest.Registry(t, examples.All)
	e, err := engine.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	store := d.Store.(*memory.Store)
	var rows []int
	for round := range rounds {
		ids := make([]string, perRound)
		for i := range ids {
			run, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline",
				InstanceID: fmt.Sprintf("r%d-%d", round, i), Input: []byte(`{"source_url":"u"}`)})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = run.InstanceID
		}
		for _, id := range ids {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			run, err := e.WaitRun(wctx, id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
			cancel()
			if err != nil {
				t.Fatalf("run %s: %v (%s)", id, err, run.RuntimeStatus)
			}
		}
		if _, err := e.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, store.Len())
	}
	// Rounds 1–3 fill the store up to memoryMaxRuns; from round 5 on the count is flat.
	full := rows[4]
	for i, n := range rows[4:] {
		if n != full {
			t.Fatalf("rows per round %v: round %d has %d, not the %d of round 5", rows, i+5, n, full)
		}
	}
	if perRun := float64(full) / memoryMaxRuns; perRun > 16 {
		t.Fatalf("rows per round %v: %.1f rows per kept run", rows, perRun)
	}
	t.Logf("rows per round: %v (%d runs started, %d kept)", rows, perRound*rounds, memoryMaxRuns)
}
