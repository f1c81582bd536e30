package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// loopState is the state of continueGraph.
type loopState struct {
	N     int  `json:"n"`     // visits of work in this generation
	Gen   int  `json:"gen"`   // the generation, as the state counts it
	Until int  `json:"until"` // the generation that completes
	Pause bool `json:"pause"` // wait for "tick" after the first visit of each generation
}

// continueGraph builds "cloop": work adds 1 to n and visits again until n is 2 (waiting for
// "tick" after the first visit when pause is set); then it continues as new with gen one
// more, until gen reaches until, and completes.
func continueGraph(t testing.TB) durable.GraphRegistration[loopState] {
	t.Helper()
	b := durable.NewManifestBuilder[loopState]("cloop")
	b.SetEntrypoint("work")
	err := b.AddStep("work", func(_ context.Context, s loopState) (loopState, error) {
		s.N++
		return s, nil
	}, durable.WithDecide(func(_ context.Context, s loopState) (durable.RouteDecision, error) {
		switch {
		case s.N < 2 && s.Pause:
			return durable.WaitForEvent("tick", "work"), nil
		case s.N < 2:
			return durable.Next("work"), nil
		case s.Gen < s.Until:
			return durable.ContinueAsNew(loopState{Gen: s.Gen + 1, Until: s.Until, Pause: s.Pause}), nil
		}
		return durable.Complete("done"), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("tick", func(context.Context, loopState, json.RawMessage) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// continueRig is a rig whose registry holds continueGraph.
func continueRig(t testing.TB, opts engine.Options) *rig {
	t.Helper()
	reg := durable.NewRegistry()
	if err := reg.Register(continueGraph(t)); err != nil {
		t.Fatal(err)
	}
	opts.Registry = reg
	return newRig(t, opts, false)
}

// rowTypes returns "type:node" for each row.
func rowTypes(rows []engine.HistoryEvent) string {
	out := make([]string, len(rows))
	for i, ev := range rows {
		out[i] = ev.Type + ":" + ev.Node
	}
	return strings.Join(out, " ")
}

// partitionRows returns the row keys of the run's partition with prefix.
func partitionRows(t testing.TB, r *rig, id, prefix string) []string {
	t.Helper()
	var keys []string
	q := engine.Query{PartitionKey: id}
	for {
		page, err := r.store.Query(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range page.Entities {
			if strings.HasPrefix(ent.RowKey, prefix) {
				keys = append(keys, ent.RowKey)
			}
		}
		if page.Continuation == "" {
			return keys
		}
		q.Continuation = page.Continuation
	}
}

// assertContinuedThrice checks a run of cloop with until 3 that completed: generation 3, its
// history the last generation's, the one before readable, the older ones gone.
func assertContinuedThrice(t testing.TB, r *rig, id string) {
	t.Helper()
	run := assertStatus(t, r, id, engine.StatusCompleted)
	if run.Generation != 3 {
		t.Fatalf("generation %d, want 3", run.Generation)
	}
	if got := string(run.Input.InitialState); got != `{"n":0,"gen":3,"until":3,"pause":false}` {
		t.Fatalf("input's initial_state %s, want the last generation's", got)
	}
	cur := r.history(t, id)
	want := "continued_as_new:work node_completed:work route_resolved:work node_completed:work route_resolved:work run_completed:work"
	if got := rowTypes(cur); got != want {
		t.Fatalf("current generation's history\n%s\nwant\n%s", got, want)
	}
	if string(cur[0].Data) != `{"generation":3,"initial_state":{"n":0,"gen":3,"until":3,"pause":false}}` {
		t.Fatalf("continued_as_new row %s", cur[0].Data)
	}
	prev, err := r.e.GenerationHistory(t.Context(), id, 2, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	want = "continued_as_new:work node_completed:work route_resolved:work node_completed:work route_resolved:work"
	if got := rowTypes(prev.Events); got != want {
		t.Fatalf("generation 2's history\n%s\nwant\n%s", got, want)
	}
	if last := prev.Events[len(prev.Events)-1]; !strings.Contains(string(last.Data), `"action":"continue_as_new"`) {
		t.Fatalf("generation 2 ends with %s", last.Data)
	}
	if prev.Events[len(prev.Events)-1].Sequence+1 != cur[0].Sequence {
		t.Fatalf("generation 2 ends at %d, generation 3 begins at %d", prev.Events[len(prev.Events)-1].Sequence, cur[0].Sequence)
	}
	var nk *engine.GenerationNotKeptError
	if _, err := r.e.GenerationHistory(t.Context(), id, 1, "", 100); !errors.As(err, &nk) {
		t.Fatalf("generation 1: %v, want a GenerationNotKeptError", err)
	}
	// Only generations 2 and 3 are stored: the older ones were deleted as the run went on.
	if rows := partitionRows(t, r, id, "h"); len(rows) != len(prev.Events)+len(cur) {
		t.Fatalf("%d history rows stored, want %d (generations 2 and 3): %v", len(rows), len(prev.Events)+len(cur), rows)
	}
}

func TestEngine_ContinueAsNew_ThreeTimesThenCompletes(t *testing.T) {
	t.Parallel()
	r := continueRig(t, engine.Options{})
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t)
	assertContinuedThrice(t, r, id)
	if got := stateOf(t, assertStatus(t, r, id, engine.StatusCompleted)); got["n"] != 2.0 || got["gen"] != 3.0 {
		t.Fatalf("final state %v", got)
	}
}

func TestEngine_ContinueAsNew_MaxStepsCountsPerGeneration(t *testing.T) {
	t.Parallel()
	// Two visits a generation, four generations: eight visits under a limit of two.
	r := continueRig(t, engine.Options{MaxSteps: 2})
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t)
	assertContinuedThrice(t, r, id)
}

func TestEngine_ContinueAsNew_InvalidInputFailsTheRoute(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	b := durable.NewManifestBuilder[loopState]("cbad")
	b.SetEntrypoint("work")
	if err := b.AddStep("work", func(_ context.Context, s loopState) (loopState, error) { s.N++; return s, nil },
		durable.WithDecide(func(context.Context, loopState) (durable.RouteDecision, error) {
			return durable.ContinueAsNew(json.RawMessage(`{"n":"many"}`)), nil
		})); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{Registry: reg}, false)
	id := r.start(t, "cbad", "c1", `{}`)
	r.drive(t)
	run := assertStatus(t, r, id, engine.StatusFailed)
	if msg := run.FailureMessage(); !strings.HasPrefix(msg, "resolve_route failed: cannot continue as new: invalid input: ") || !strings.Contains(msg, "n") {
		t.Fatalf("failure %q", msg)
	}
	if run.Generation != 0 {
		t.Fatalf("generation %d after a refused continue", run.Generation)
	}
}

func TestEngine_ContinueAsNew_FeedFollowsAcrossGenerations(t *testing.T) {
	t.Parallel()
	r := continueRig(t, engine.Options{})
	id := r.start(t, "cloop", "c1", `{"until":3,"pause":true}`)
	r.drive(t) // generation 0 waits for its tick
	first, err := r.e.Feed(t.Context(), id, engine.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var all []engine.HistoryEvent
	all = append(all, first.Items...)
	after, run := first.NextAfter, first.Run
	for range 4 {
		if err := r.e.RaiseEvent(t.Context(), id, "tick", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
		r.drive(t)
		// A reader resuming from the generation before goes on into the new one.
		page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: after, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		if page.Run != run {
			t.Fatalf("the feed's run changed from %s to %s across a continue-as-new", run, page.Run)
		}
		all = append(all, page.Items...)
		after = page.NextAfter
	}
	var gens []string
	for i, ev := range all {
		if i > 0 && ev.Sequence != all[i-1].Sequence+1 {
			t.Fatalf("the feed skipped from %d to %d", all[i-1].Sequence, ev.Sequence)
		}
		if ev.Type == engine.HistoryContinuedAsNew {
			var d struct {
				Generation int `json:"generation"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			gens = append(gens, string(rune('0'+d.Generation)))
		}
	}
	if got := strings.Join(gens, ","); got != "1,2,3" {
		t.Fatalf("the feed marked generations %q, want 1,2,3", got)
	}
	if last := all[len(all)-1]; last.Type != engine.HistoryRunCompleted {
		t.Fatalf("the feed ends with %s", last.Type)
	}
	assertStatus(t, r, id, engine.StatusCompleted)
}

func TestEngine_ContinueAsNew_PurgeRemovesEveryGeneration(t *testing.T) {
	t.Parallel()
	r := continueRig(t, engine.Options{})
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if rows := partitionRows(t, r, id, ""); len(rows) != 0 {
		t.Fatalf("rows left after the purge: %v", rows)
	}
}

// The continued_as_new row records the new generation's whole state, whatever the form of
// the rows before it: a reader folding a history across it starts again from it.
func TestFoldState_ContinuedAsNewStartsAgain(t *testing.T) {
	t.Parallel()
	prev := json.RawMessage(`{"n":2,"gen":0}`)
	row := engine.HistoryEvent{Sequence: 6, Type: engine.HistoryContinuedAsNew, Data: json.RawMessage(`{"generation":1,"initial_state":{"n":0,"gen":1}}`)}
	s, ok, err := engine.FoldState(prev, row)
	if err != nil || !ok || string(s) != `{"n":0,"gen":1}` {
		t.Fatalf("FoldState = %s, %v, %v; want the new generation's initial state", s, ok, err)
	}
	// A row of update form after it applies to that state.
	next := engine.HistoryEvent{Sequence: 7, Type: engine.HistoryNodeCompleted, Data: json.RawMessage(`{"update":{"n":{"set":1}}}`)}
	if s, _, err = engine.FoldState(s, next); err != nil || string(s) != `{"n":1,"gen":1}` {
		t.Fatalf("the row after: %s, %v", s, err)
	}
}

// Retention ages a run that continued as new from its finish, and purges every generation's
// rows with it.
func TestEngine_ContinueAsNew_RetentionPurgesEveryGeneration(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := continueRig(t, engine.Options{Clock: clock.now, Retention: engine.Retention{MaxAge: time.Hour}})
	id := r.start(t, "cloop", "c1", `{"until":3}`)
	r.drive(t)
	assertContinuedThrice(t, r, id)
	clock.advance(2 * time.Hour)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("after its age: %v, want purged", err)
	}
	if rows := partitionRows(t, r, id, ""); len(rows) != 0 {
		t.Fatalf("rows left after retention: %v", rows)
	}
	assertNoOrphans(t, r, id)
}
