package engine_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestEngine_RunState_CostsOneHeadRead: a run's state is read from its head: one point read,
// whatever the length of its history, and no history row (a run of 3 steps and one of 60).
func TestEngine_RunState_CostsOneHeadRead(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "short", 3, nil), chainGraph(t, "long", 60, nil))
	for _, graph := range []string{"short", "long"} {
		r.start(t, graph, graph, `{}`)
		r.drive(t)
		r.counts.Reset()
		st, err := r.e.RunState(t.Context(), graph)
		if err != nil {
			t.Fatal(err)
		}
		if g, q, p := r.counts.Gets.Load(), r.counts.Queries.Load(), r.counts.PayloadGets.Load(); g != 1 || q != 0 || p != 0 {
			t.Errorf("%s: %d reads, %d queries, %d payload reads; want 1, 0, 0", graph, g, q, p)
		}
		run, err := r.e.GetRun(t.Context(), graph)
		if err != nil {
			t.Fatal(err)
		}
		final, err := engine.DecodeOutput[map[string]any](run)
		if err != nil {
			t.Fatal(err)
		}
		var state map[string]any
		if err := json.Unmarshal(st.State, &state); err != nil || st.RuntimeStatus != engine.StatusCompleted || st.Step < 3 || !reflect.DeepEqual(state, final.State) {
			t.Errorf("%s: %+v, state %s; final %v", graph, st, st.State, final.State)
		}
	}
	for _, id := range []string{"nope", "..", ""} {
		r.counts.Reset()
		if _, err := r.e.RunState(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("RunState(%q): %v, want ErrRunNotFound", id, err)
		}
	}
}
