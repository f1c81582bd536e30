package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
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
	r := newRig(t, engine.Options{}, false, gated)
	id := r.start(t, "gated", "first-visit", `{}`)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != engine.StatusPending || string(run.CustomStatus) != "null" && run.CustomStatus != nil {
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
	if run.Status != engine.StatusRunning || custom["current_node"] != "n0" || custom["graph_name"] != "gated" {
		t.Fatalf("during the first visit: status %s, custom %s; want Running at n0", run.Status, run.CustomStatus)
	}
	close(release)
	<-done
	if run := r.wait(t, id); run.Status != engine.StatusCompleted {
		t.Fatalf("final status %s", run.Status)
	}
}

// TestEngine_IdempotencyKey_DistinctForReplacedRun: a finished run replaced under the same
// instance id gives its handlers new idempotency keys, so deduplicated side effects of the
// old run do not swallow the new run's.
func TestEngine_IdempotencyKey_DistinctForReplacedRun(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 4)
	g := chainGraph(t, "keyed", 1, func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		keys <- info.IdempotencyKey()
		return nil, nil
	})
	r := newRig(t, engine.Options{}, false, g)
	for range 2 {
		r.start(t, "keyed", "reused", `{}`)
		r.drive(t)
		if run := r.wait(t, "reused"); run.Status != engine.StatusCompleted {
			t.Fatalf("status %s", run.Status)
		}
	}
	first, second := <-keys, <-keys
	if !strings.HasPrefix(first, "reused:1.") || !strings.HasSuffix(first, ":1") ||
		!strings.HasPrefix(second, "reused:2.") || !strings.HasSuffix(second, ":1") {
		t.Fatalf("keys %q and %q, want reused:1.<nonce>:1 and reused:2.<nonce>:1", first, second)
	}
}
