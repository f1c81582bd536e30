package engine_test

import (
	"context"
	"sync"
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

// TestEngine_Observer_SeesPoisonFailure: a run failed because its work item reached the
// delivery limit is reported to the observer as Failed, naming the node and the cause.
func TestEngine_Observer_SeesPoisonFailure(t *testing.T) {
	t.Parallel()
	obs := &recordingObserver{}
	r := newRig(t, engine.Options{Observer: obs}, false)
	id := r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 0), 5); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.ended) != 1 || obs.ended[0].Kind != engine.ObservedFailed || obs.ended[0].Node != "extract" || obs.ended[0].Failure == "" {
		t.Fatalf("observed %+v, want one Failed step at extract with its cause", obs.ended)
	}
}
