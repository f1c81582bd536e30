package platformruns_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// TestLegacyRuns_StartedByThePreviousReleaseFinish: a background run that a process of the
// previous release (graph version "1", hash kept) started and left pending is run to its end
// by this release, not parked for a version nobody runs.
func TestLegacyRuns_StartedByThePreviousReleaseFinish(t *testing.T) {
	st := newStorage()
	b, err := platformruns.Register(durable.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	v1, hash, err := platformruns.LegacyGraph(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.Manifest().GraphHash; got != hash {
		t.Fatalf("version 1 hash %s, want %s: runs of the previous release would park", got, hash)
	}
	// The previous release's process: only version 1, never started (it went away).
	oldReg := durable.NewRegistry()
	if err := oldReg.RegisterInternal(v1); err != nil {
		t.Fatal(err)
	}
	old, err := engine.New(engine.Options{Registry: oldReg, Store: st.store, Queue: st.queue, Payloads: st.blobs})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"thread_id": "t1", "run_id": "old-run", "created_at": "2025-06-01T12:00:00.000000000Z", "request": "{}"})
	if _, err := old.StartRun(t.Context(), engine.StartRunRequest{GraphName: platformruns.GraphName, InstanceID: "old-run", Input: in}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 1)
	rb := instance(t, st, execFunc(func(_ context.Context, run platform.Run) (platform.RunStatus, error) {
		ran <- run.RunID
		return platform.RunSuccess, nil
	}))
	select {
	case id := <-ran:
		if id != "old-run" {
			t.Fatalf("executed %s", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the previous release's run was never executed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got, err := rb.Join(ctx, "t1", "old-run")
	if err != nil || got.Status != platform.RunSuccess {
		t.Fatalf("join: %+v %v", got, err)
	}
}
