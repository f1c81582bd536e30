package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// newEmitting returns a node handler that emits "progress" twice per visit, with n and how
// often a node with this n has run (exec, from 1), then adds 1 to n.
func newEmitting() durable.NodeFunc[counterState] {
	var mu sync.Mutex
	execs := map[int]int{}
	return func(ctx context.Context, s counterState) (any, error) {
		mu.Lock()
		execs[s.N]++
		exec := execs[s.N]
		mu.Unlock()
		for i := range 2 {
			if err := durable.Emit(ctx, "progress", map[string]int{"n": s.N, "part": i, "exec": exec}); err != nil {
				return nil, err
			}
		}
		return durable.Update{"n": s.N + 1}, nil
	}
}

// customRows returns "node:name:data" of the run's custom history rows, checking that they
// also come out of the feed, each right before its node's node_completed row.
func customRows(t *testing.T, r *rig, id string) []string {
	t.Helper()
	hist := r.history(t, id)
	items, _ := feedAll(t, r.e, id, 0)
	sameEvents(t, items, hist)
	var out []string
	for i, ev := range hist {
		if ev.Type != engine.HistoryCustom {
			continue
		}
		next := i + 1
		for next < len(hist) && hist[next].Type == engine.HistoryCustom {
			next++
		}
		if next == len(hist) || hist[next].Type != engine.HistoryNodeCompleted || hist[next].Node != ev.Node {
			t.Fatalf("custom row %d of %s is not followed by its node's node_completed: %s", ev.Sequence, ev.Node, strings.Join(checkHistory(t, hist), " "))
		}
		var d struct {
			Name string          `json:"name"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Name != ev.Name {
			t.Fatalf("custom row data %s (name %q): %v", ev.Data, ev.Name, err)
		}
		out = append(out, ev.Node+":"+ev.Name+":"+string(d.Data))
	}
	return out
}

// wantEmitted is what a chain of emitting nodes stores when node n<i> committed its
// execution number execs[i].
func wantEmitted(execs ...int) string {
	var rows []string
	for n, x := range execs {
		for part := range 2 {
			rows = append(rows, fmt.Sprintf(`n%d:progress:{"exec":%d,"n":%d,"part":%d}`, n, x, n, part))
		}
	}
	return strings.Join(rows, " ")
}

func TestEngine_Emit_WrittenWithTheStep(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, newEmitting()))
	id := r.start(t, "emits", "", `{}`)
	r.counts.Reset()
	r.drive(t)
	if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 1, 1) {
		t.Fatalf("custom rows:\n%s\nwant\n%s", got, wantEmitted(1, 1, 1))
	}
	hist := r.history(t, id)
	if hist[1].Type != engine.HistoryCustom || hist[1].Name != "progress" || hist[1].Node != "n0" {
		t.Fatalf("second row %+v, want n0's first custom row", hist[1])
	}
}

// TestEngine_Emit_CostsNoStorageOperation: a step that emits costs the batches a step that
// does not emit costs.
func TestEngine_Emit_CostsNoStorageOperation(t *testing.T) {
	t.Parallel()
	ops := map[string]int64{}
	for name, handler := range map[string]durable.NodeFunc[counterState]{"quiet": incr, "loud": newEmitting()} {
		r := newRig(t, engine.Options{}, false, chainGraph(t, name, 3, handler))
		r.start(t, name, "", `{}`)
		r.counts.Reset()
		r.drive(t)
		ops[name] = r.counts.Total()
	}
	if ops["loud"] != ops["quiet"] {
		t.Fatalf("storage operations: %d with emitted events, %d without", ops["loud"], ops["quiet"])
	}
}

// TestEngine_Emit_ExactlyOnce: whatever goes wrong around a step's commit, its events are
// stored once, those of the attempt that committed.
func TestEngine_Emit_ExactlyOnce(t *testing.T) {
	t.Parallel()
	t.Run("crash before the commit, redelivered", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, newEmitting()))
		r.fstore.BeforeSubmit = once("n1")
		id := r.start(t, "emits", "", `{}`)
		r.drive(t) // the item fails at n1's commit and stays in the queue
		if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 2), 2); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 2, 1) {
			t.Fatalf("custom rows:\n%s\nwant\n%s", got, wantEmitted(1, 2, 1))
		}
	})
	t.Run("lost reply of the commit", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, newEmitting()))
		var lost atomic.Bool
		r.fstore.LoseReply = func(ops []engine.Op) bool { return commitsNode(ops, "n1") && lost.CompareAndSwap(false, true) }
		id := r.start(t, "emits", "", `{}`)
		r.drive(t)
		if !lost.Load() {
			t.Fatal("no reply was lost")
		}
		if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 1, 1) {
			t.Fatalf("custom rows:\n%s\nwant\n%s", got, wantEmitted(1, 1, 1))
		}
	})
	t.Run("committed, then the worker died", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, newEmitting()))
		var dead atomic.Bool
		commitOnce := once("n1")
		r.fstore.AfterSubmit = func(ops []engine.Op) error {
			err := commitOnce(ops)
			if err != nil {
				dead.Store(true)
			}
			return err
		}
		r.fstore.BeforeGet = func(string, string) error {
			if dead.CompareAndSwap(true, false) {
				return enginetest.ErrInjected
			}
			return nil
		}
		id := r.start(t, "emits", "", `{}`)
		r.drive(t)
		if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 2), 2); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 1, 1) {
			t.Fatalf("custom rows:\n%s\nwant\n%s", got, wantEmitted(1, 1, 1))
		}
	})
	t.Run("two workers on one step", func(t *testing.T) {
		t.Parallel()
		var entered sync.WaitGroup
		entered.Add(2)
		var calls atomic.Int32
		emitting := newEmitting()
		barrier := func(ctx context.Context, s counterState) (any, error) {
			if calls.Add(1) <= 2 {
				entered.Done()
				entered.Wait() // both workers are inside the first node, emitting
			}
			return emitting(ctx, s)
		}
		r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, barrier))
		id := r.start(t, "emits", "", `{}`)
		msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, 1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		// Either worker's visit of n0 may have won; the other's events are gone with it.
		got := strings.Join(customRows(t, r, id), " ")
		if got != wantEmitted(1, 1, 1) && got != wantEmitted(2, 1, 1) {
			t.Fatalf("custom rows:\n%s\nwant\n%s\nor\n%s", got, wantEmitted(1, 1, 1), wantEmitted(2, 1, 1))
		}
	})
	t.Run("an event lands under the commit", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, engine.Options{}, false, chainGraph(t, "emits", 3, newEmitting()))
		var raised atomic.Bool
		r.fstore.BeforeSubmit = func(ops []engine.Op) error {
			if commitsNode(ops, "n1") && raised.CompareAndSwap(false, true) {
				return r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "noise", nil)
			}
			return nil
		}
		id := r.start(t, "emits", "", `{}`)
		r.drive(t)
		if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 1, 1) {
			t.Fatalf("custom rows after a rebased commit:\n%s\nwant\n%s", got, wantEmitted(1, 1, 1))
		}
	})
	t.Run("a failed attempt emits nothing", func(t *testing.T) {
		t.Parallel()
		var failed atomic.Bool
		emitting := newEmitting()
		flaky := func(ctx context.Context, s counterState) (any, error) {
			if _, err := emitting(ctx, s); err != nil {
				return nil, err
			}
			if info, _ := durable.StepInfoFrom(ctx); s.N == 1 && failed.CompareAndSwap(false, true) {
				return nil, fmt.Errorf("attempt %d: flaky", info.Attempt)
			}
			return durable.Update{"n": s.N + 1}, nil
		}
		r := newRig(t, engine.Options{Policies: map[string]engine.GraphPolicy{"emits": {Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}},
			true, chainGraph(t, "emits", 3, flaky))
		id := r.start(t, "emits", "", `{}`)
		if run := r.waitFor(t, id, func(run engine.Run) bool { return run.RuntimeStatus.Finished() }); run.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("run %s: %s", run.RuntimeStatus, run.Output)
		}
		if got := strings.Join(customRows(t, r, id), " "); got != wantEmitted(1, 2, 1) {
			t.Fatalf("custom rows:\n%s\nwant\n%s", got, wantEmitted(1, 2, 1))
		}
	})
}

// TestEngine_Emit_EventHandlerEmits: an event handler's events are written with the event's
// step, before its event_applied row.
func TestEngine_Emit_EventHandlerEmits(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[counterState]("gate")
	b.SetEntrypoint("ask")
	if err := b.AddNode("ask", incr, durable.WithRoute(func(context.Context, counterState) (any, error) {
		return durable.WaitForEvent("go", "done"), nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("done", incr, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("go", func(ctx context.Context, s counterState, payload json.RawMessage) (any, error) {
		return nil, durable.Emit(ctx, "received", payload)
	}); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{}, true, g)
	id := r.start(t, "gate", "", `{}`)
	r.wait(t, id)
	if err := r.e.RaiseEvent(t.Context(), id, "go", json.RawMessage(`{"k":1}`)); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, id, func(run engine.Run) bool { return run.RuntimeStatus.Finished() })
	var types []string
	for _, ev := range r.history(t, id) {
		types = append(types, ev.Type+":"+ev.Node)
		if ev.Type == engine.HistoryCustom && string(ev.Data) != `{"name":"received","data":{"k":1}}` {
			t.Fatalf("custom row data %s", ev.Data)
		}
	}
	want := "run_started:ask node_completed:ask route_resolved:ask wait_started:ask event_received:ask custom:done event_applied:done node_completed:done route_resolved:done run_completed:done"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("history %s\nwant    %s", got, want)
	}
}

// TestEngine_Emit_BoundedPerStep: past MaxEmitsPerStep, Emit refuses with ErrTooManyEmits
// and the step stores the events before it.
func TestEngine_Emit_BoundedPerStep(t *testing.T) {
	t.Parallel()
	var refused atomic.Value
	chatty := func(ctx context.Context, s counterState) (any, error) {
		for i := range durable.MaxEmitsPerStep + 1 {
			if err := durable.Emit(ctx, "tick", i); err != nil {
				refused.Store(fmt.Sprintf("%d: %v", i, err))
				if !errors.Is(err, durable.ErrTooManyEmits) {
					return nil, err
				}
			}
		}
		return nil, nil
	}
	r := newRig(t, engine.Options{}, false, chainGraph(t, "chatty", 1, chatty))
	id := r.start(t, "chatty", "", `{}`)
	r.drive(t)
	if got, want := fmt.Sprint(refused.Load()), fmt.Sprintf("%d: emit \"tick\": durable: too many events emitted in one step: at most %d", durable.MaxEmitsPerStep, durable.MaxEmitsPerStep); got != want {
		t.Fatalf("refusal %q, want %q", got, want)
	}
	if rows := customRows(t, r, id); len(rows) != durable.MaxEmitsPerStep {
		t.Fatalf("%d custom rows, want %d", len(rows), durable.MaxEmitsPerStep)
	}
}

// TestEngine_Emit_LargeDataSpills: an emitted document above the inline limit goes to the
// payload store and reads back whole through history and feed.
func TestEngine_Emit_LargeDataSpills(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5000)
	loud := func(ctx context.Context, s counterState) (any, error) {
		return nil, durable.Emit(ctx, "blob", big)
	}
	r := newRig(t, engine.Options{InlineLimit: 1024}, false, chainGraph(t, "loud", 1, loud))
	id := r.start(t, "loud", "", `{}`)
	r.counts.Reset()
	r.drive(t)
	if r.counts.PayloadPuts.Load() == 0 {
		t.Fatal("the large event did not spill")
	}
	rows := customRows(t, r, id)
	if len(rows) != 1 || rows[0] != `n0:blob:"`+big+`"` {
		t.Fatalf("custom rows %.100q", rows)
	}
}
