package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// recordingObserver keeps the kinds of the step ends it sees.
type recordingObserver struct {
	engine.NopObserver
	mu    sync.Mutex
	ended []engine.RunEvent
}

func (o *recordingObserver) StepEnded(_ context.Context, ev engine.RunEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, ev)
}

// TestEngine_Observer_SeesPoisonFailure: a run failed because its step kept killing its
// worker is reported to the observer as Failed, naming the node and the cause.
func TestEngine_Observer_SeesPoisonFailure(t *testing.T) {
	t.Parallel()
	obs := &recordingObserver{}
	var die atomic.Bool
	var entered atomic.Int32
	clk := newFakeClock()
	r := newRig(t, engine.Options{Observer: obs, Clock: clk.now}, false, dyingGraph(t, &die, &entered))
	id := r.start(t, "dying", "", `{}`)
	die.Store(true)
	killStep(t, r, clk, id, 5)
	obs.mu.Lock()
	obs.ended = nil
	obs.mu.Unlock()
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 0), 6); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.ended) != 1 || obs.ended[0].Kind != engine.ObservedFailed || obs.ended[0].Node != "n0" || obs.ended[0].Failure == "" {
		t.Fatalf("observed %+v, want one Failed step at n0 with its cause", obs.ended)
	}
}
