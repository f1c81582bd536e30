package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Issue #10, defect 5.
func TestEngine_SlowStepLongerThanVisibility_KeptHiddenNotPoisoned(t *testing.T) {
	t.Parallel()
	var entered atomic.Int32
	release := make(chan struct{})
	slow := func(_ context.Context, s counterState) (any, error) {
		entered.Add(1)
		<-release
		return durable.Update{"n": s.N + 1}, nil
	}
	// Renewals every 100 ms: a shorter timeout lets a loaded machine starve one renewal.
	r := newRig(t, engine.Options{VisibilityTimeout: 300 * time.Millisecond, MaxDequeueCount: 2, Concurrency: 3}, true,
		chainGraph(t, "slow", 1, slow))
	id := r.start(t, "slow", "", `{}`)
	time.Sleep(1500 * time.Millisecond) // several visibility timeouts
	close(release)
	run := r.waitFor(t, id, nil)
	if run.RuntimeStatus != engine.StatusCompleted || entered.Load() != 1 {
		t.Fatalf("status %s output %s, handler entered %d times: a healthy slow step was redelivered", run.RuntimeStatus, run.Output, entered.Load())
	}
}

// Issue #10, defect 5, second half: a handling that fails (storage error) is not a death.
func TestEngine_FailedHandlings_DoNotCountTowardsPoison(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{VisibilityTimeout: 100 * time.Millisecond, MaxDequeueCount: 2}, true)
	var fails atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitsNode(ops, "transform") && fails.Add(1) <= 3 {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	if run := r.waitFor(t, id, nil); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s: storage errors were counted as poison deliveries", run.RuntimeStatus, run.Output)
	}
}
