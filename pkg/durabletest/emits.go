package durabletest

import (
	"context"
	"encoding/json"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Emitted is one event a handler emitted with durable.Emit.
type Emitted struct {
	// Name is the name the handler gave it.
	Name string
	// Data is its data as JSON.
	Data json.RawMessage
}

// Emits collects what handlers emit under the context RecordEmits returns, as the engine
// does for a step: in a handler's unit test, outside the engine, where durable.Emit
// otherwise does nothing. It is safe for concurrent use.
type Emits struct{ e *graphrun.Emitter }

// RecordEmits returns a context under which durable.Emit records its events in the returned
// Emits, with a step's limits (durable.MaxEmitsPerStep):
//
//	ctx, emits := durabletest.RecordEmits(t.Context())
//	_, _ = summarize(ctx, state)
//	for _, ev := range emits.Events() { ... }
func RecordEmits(ctx context.Context) (context.Context, *Emits) {
	ctx, e := graphrun.WithEmitter(ctx)
	return ctx, &Emits{e: e}
}

// Events returns the events emitted so far, in the order durable.Emit returned.
func (r *Emits) Events() []Emitted {
	evs := r.e.Events()
	if evs == nil {
		return nil
	}
	out := make([]Emitted, len(evs))
	for i, ev := range evs {
		out[i] = Emitted{Name: ev.Name, Data: ev.Data}
	}
	return out
}
