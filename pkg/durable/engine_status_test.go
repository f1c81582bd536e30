package durable_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// TestEngine_Status_PendingThenRunningDuringFirstVisit: a run reads Pending (custom status
// null) until a worker takes it, and Running with current_node = entrypoint while the
// entrypoint's handler runs (durable.md sections 7 and 9).
func TestEngine_Status_PendingThenRunningDuringFirstVisit(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	gated := chainGraph(t, "gated", 2, func(ctx context.Context, s counterState) (any, error) {
		if s.N == 0 {
			close(entered)
			<-release
		}
		return durable.Update{"n": s.N + 1}, nil
	})
	r := newRig(t, durable.EngineOptions{}, false, gated)
	id := r.start(t, "gated", "first-visit", `{}`)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.StatusPending || string(run.CustomStatus) != "null" && run.CustomStatus != nil {
		t.Fatalf("before a worker: status %s, custom %s; want Pending, null", run.Status, run.CustomStatus)
	}
	done := make(chan struct{})
	go func() { defer close(done); r.drive(t) }()
	<-entered
	run, err = r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var custom map[string]any
	_ = json.Unmarshal(run.CustomStatus, &custom)
	if run.Status != durable.StatusRunning || custom["current_node"] != "n0" || custom["graph_name"] != "gated" {
		t.Fatalf("during the first visit: status %s, custom %s; want Running at n0", run.Status, run.CustomStatus)
	}
	close(release)
	<-done
	if run := r.wait(t, id); run.Status != durable.StatusCompleted {
		t.Fatalf("final status %s", run.Status)
	}
}
