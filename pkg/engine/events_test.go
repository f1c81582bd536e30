package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

const approval = `{"approved":true,"reviewer":"r"}`

// Two raises with one Idempotency-Key at once: both are accepted, one event is stored.
// The second request's batch meets the first's key row and answers success. (Guards
// events.go's key-conflict branch.)
func TestEngine_ConcurrentRaisesOneIdempotencyKey_BothAcceptedOneEvent(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	var inner atomic.Bool
	var innerErr error
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsInbox(ops) && inner.CompareAndSwap(false, true) {
			// The other request is accepted while this one is about to write.
			innerErr = r.e.RaiseEvent(context.Background(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k"))
		}
		return nil
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if !inner.Load() || innerErr != nil {
		t.Fatalf("second request: ran %v, %v", inner.Load(), innerErr)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one key", n)
	}
}

// A keyed retry that arrives after the event made the run finish is accepted (202), not
// refused as "run finished" (409): the key says it is stored. (Guards events.go's check of
// the stored key before the run's status.)
func TestEngine_KeyedRetryAfterRunFinished_Accepted(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatalf("the client's retry of an accepted event: %v", err)
	}
	var finished *engine.RunFinishedError
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("other")); !errors.As(err, &finished) {
		t.Fatalf("a new key on a finished run: %v, want *RunFinishedError", err)
	}
	if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored", n)
	}
}

// lateGraph is "late": "ask" waits for "approval" an hour, then gives up and goes on at
// "escalate", which waits for "manager" and resumes at "done".
func lateGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[counterState]("late")
	b.SetEntrypoint("ask")
	noop := func(context.Context, counterState) (any, error) { return nil, nil }
	waitFor := func(d durable.RouteDecision) durable.RouteFunc[counterState] {
		return func(context.Context, counterState) (any, error) { return d, nil }
	}
	for _, err := range []error{
		b.AddNode("ask", noop, durable.WithHandlerName("test.late.ask"), durable.WithRouteName("test.late.r1"),
			durable.WithRoute(waitFor(durable.WaitForEvent("approval", "done").Within(time.Hour, "escalate")))),
		b.AddNode("escalate", noop, durable.WithHandlerName("test.late.escalate"), durable.WithRouteName("test.late.r2"),
			durable.WithRoute(waitFor(durable.WaitForEvent("manager", "done")))),
		b.AddNode("done", noop, durable.WithHandlerName("test.late.done"), durable.Terminal()),
		b.AddEventHandler("approval", func(context.Context, counterState, json.RawMessage) (any, error) { return nil, nil }),
		b.AddEventHandler("manager", func(context.Context, counterState, json.RawMessage) (any, error) { return nil, nil }),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// notApplied returns the data of a run's event_not_applied rows, in order, and checks they
// come right before the row that finished the run.
func notApplied(t *testing.T, r *rig, id string) []string {
	t.Helper()
	h := r.history(t, id)
	var out []string
	for i, ev := range h {
		if ev.Type != engine.HistoryEventNotApplied {
			continue
		}
		out = append(out, string(ev.Data))
		if next := h[i+1].Type; next != engine.HistoryEventNotApplied && next != engine.HistoryRunCompleted &&
			next != engine.HistoryRunFailed && next != engine.HistoryRunTerminated {
			t.Fatalf("event_not_applied followed by %s, want the run's last rows", next)
		}
	}
	return out
}

// Issue #32: an event that arrives after its wait timed out, while the run goes on (here to
// wait for another event), is stored — the run could still wait for its name again — and
// when the run finishes without having applied it, the history says so: an
// event_not_applied row naming it and its inbox_seq, before run_completed. Once the run is
// finished, another such event is refused (409).
func TestEngine_EventAfterItsWaitTimedOut_RecordedNotApplied(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, lateGraph(t))
	id := r.start(t, "late", "", `{}`)
	r.drive(t)
	clk.advance(2 * time.Hour)
	r.drive(t) // the wait timed out: the run waits for "manager" now
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`"too late"`)); err != nil {
		t.Fatalf("late event on a running run: %v", err)
	}
	if err := r.e.RaiseEvent(t.Context(), id, "manager", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if got, want := notApplied(t, r, id), []string{`{"event_name":"approval","inbox_seq":1}`}; !slices.Equal(got, want) {
		t.Fatalf("event_not_applied rows %v, want %v", got, want)
	}
	var finished *engine.RunFinishedError
	if err := r.e.RaiseEvent(t.Context(), id, "approval", nil); !errors.As(err, &finished) {
		t.Fatalf("event on the finished run: %v, want a *RunFinishedError (409)", err)
	}
}

// Issue #32: a run that fails or is cancelled with events in its inbox records each as not
// applied, in arrival order, in its finishing batch.
func TestEngine_RunEndsWithEventsLeft_RecordedNotApplied(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"cancelled", "failed"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			// One node visit at most: the visit after the wait's timeout fails the run.
			r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"late": {MaxSteps: 1}}}, false, lateGraph(t))
			id := r.start(t, "late", "", `{}`)
			r.drive(t) // waiting for approval, an hour at most
			for range 2 {
				if err := r.e.RaiseEvent(t.Context(), id, "manager", nil); err != nil { // not waited for yet
					t.Fatal(err)
				}
			}
			switch end {
			case "cancelled":
				if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
					t.Fatal(err)
				}
				assertStatus(t, r, id, engine.StatusTerminated)
			case "failed":
				clk.advance(2 * time.Hour)
				r.drive(t)
				assertStatus(t, r, id, engine.StatusFailed)
			}
			want := []string{`{"event_name":"manager","inbox_seq":1}`, `{"event_name":"manager","inbox_seq":2}`}
			if got := notApplied(t, r, id); !slices.Equal(got, want) {
				t.Fatalf("event_not_applied rows %v, want %v", got, want)
			}
		})
	}
}

// Issue #32: an event raised while the finishing step commits makes it rebase; the rows it
// writes then name that event too.
func TestEngine_EventDuringTheFinishingCommit_RecordedNotApplied(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, lateGraph(t))
	id := r.start(t, "late", "", `{}`)
	r.drive(t)
	clk.advance(2 * time.Hour)
	r.drive(t) // waiting for "manager"
	for _, name := range []string{"approval", "manager"} {
		if err := r.e.RaiseEvent(t.Context(), id, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	var raised atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunCompleted)(ops) && raised.CompareAndSwap(false, true) {
			return r.e.RaiseEvent(context.Background(), id, "approval", json.RawMessage(`"later still"`))
		}
		return nil
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	want := []string{`{"event_name":"approval","inbox_seq":1}`, `{"event_name":"approval","inbox_seq":3}`}
	if got := notApplied(t, r, id); !raised.Load() || !slices.Equal(got, want) {
		t.Fatalf("event_not_applied rows %v, want %v", got, want)
	}
}
