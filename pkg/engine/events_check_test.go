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

type expenseState struct {
	Amount   int    `json:"amount"`
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

type verdict struct {
	Approved bool   `json:"approved" durable:"required"`
	Reviewer string `json:"reviewer"`
}

// expenseGraph waits for a typed "approval" in "ask", then ends in "done".
func expenseGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[expenseState]("expenses")
	b.SetEntrypoint("ask")
	if err := b.AddStep("ask", func(_ context.Context, s expenseState) (expenseState, error) { return s, nil },
		durable.WithDecide(func(context.Context, expenseState) (durable.RouteDecision, error) {
			return durable.WaitForEvent("approval", "done"), nil
		})); err != nil {
		t.Fatal(err)
	}
	if err := b.AddStep("done", func(_ context.Context, s expenseState) (expenseState, error) { return s, nil }, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := durable.OnEvent(b, "approval", func(_ context.Context, s expenseState, v verdict) (expenseState, error) {
		s.Approved, s.Reviewer = v.Approved, v.Reviewer
		return s, nil
	}); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Issue #21: clients are forgiven unknown fields; a typed payload is checked before it is
// stored; a name the graph has no handler for is refused naming the event and the graph.
func TestEngine_RaiseEvent_CheckedAgainstTheRunsGraph(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, expenseGraph(t))
	id := r.start(t, "expenses", "", `{"amount": 3, "comment": "unknown keys of a start are ignored"}`)
	r.drive(t)
	stored := func() int { return len(r.history(t, id)) }
	before := stored()

	var unknown *engine.UnknownEventError
	err := r.e.RaiseEvent(t.Context(), id, "aproval", json.RawMessage(`{"approved": true}`))
	if !errors.As(err, &unknown) || !errors.Is(err, durable.ErrUnknownEvent) ||
		err.Error() != "graph 'expenses' has no handler for event 'aproval'" {
		t.Fatalf("unknown event: %v", err)
	}
	for payload, want := range map[string]string{
		`{"approved": "yes"}`: "invalid payload of event 'approval': field 'approved': expected bool, got JSON string",
		`{"reviewer": "r"}`:   "invalid payload of event 'approval': field 'approved': field required",
		`[true]`:              "invalid payload of event 'approval': payload must be a JSON object",
	} {
		err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(payload))
		var pe *durable.EventPayloadError
		if !errors.As(err, &pe) || !errors.Is(err, durable.ErrInvalidEventPayload) || err.Error() != want {
			t.Errorf("payload %s: %v, want %q", payload, err, want)
		}
	}
	if after := stored(); after != before {
		t.Fatalf("refused events stored rows: history %d → %d", before, after)
	}

	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": true, "reviewer": "r", "aproved": false}`)); err != nil {
		t.Fatalf("unknown payload keys: %v", err)
	}
	r.drive(t)
	run := r.wait(t, id)
	if st := stateOf(t, run); run.RuntimeStatus != engine.StatusCompleted || st["approved"] != true || st["reviewer"] != "r" {
		t.Fatalf("run %s %s, want completed with the approval", run.RuntimeStatus, run.Output)
	}
}

// Issue #32: a process that does not have the run's graph version cannot check an event, so
// it stores nothing and says to retry (503 over HTTP); a process that has it accepts it.
func TestEngine_RaiseEvent_VersionNotHere_RefusedUntilAnInstanceHasIt(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	first := newRig(t, engine.Options{Registry: regOf(t, expenseGraph(t)), Clock: clk.now, SweepInterval: -1}, false)
	first.start(t, "expenses", "x", `{}`)
	first.drive(t)
	before := len(first.history(t, "x"))
	other := first.deploy(t, clk.now, approvalGraph(t, "2"))
	err := other.e.RaiseEvent(t.Context(), "x", "approval", json.RawMessage(`{"approved": "not checked here"}`))
	var unavailable *engine.VersionUnavailableError
	if !errors.As(err, &unavailable) || unavailable.Graph != "expenses" || unavailable.Hash != expenseGraph(t).Manifest().GraphHash {
		t.Fatalf("event on a run of a version not registered here: %v, want a *VersionUnavailableError", err)
	}
	if after := len(first.history(t, "x")); after != before {
		t.Fatalf("the refused event stored rows: history %d → %d", before, after)
	}
	if err := first.e.RaiseEvent(t.Context(), "x", "approval", json.RawMessage(`{"approved": true}`)); err != nil {
		t.Fatalf("event on a process that has the version: %v", err)
	}
}

// The events of a graph registered as internal are the app's own: an instance that lacks the
// run's version stores them all the same (the version that applies them checks them).
func TestEngine_RaiseEvent_InternalGraphVersionNotHere_Accepted(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	internal := func(g durable.Graph) *durable.Registry {
		reg := durable.NewRegistry()
		if err := reg.RegisterInternal(g); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	first := newRig(t, engine.Options{Registry: internal(approvalGraph(t, "1")), Clock: clk.now, SweepInterval: -1}, false)
	first.start(t, "approvals", "x", `{}`)
	first.drive(t)
	other := mustEngine(t, engine.Options{Registry: internal(approvalGraph(t, "2")), Store: first.fstore, Queue: first.fqueue,
		Payloads: first.payloads, Clock: clk.now, Logger: first.e.Options().Logger, SweepInterval: -1})
	if err := other.RaiseEvent(t.Context(), "x", "go", nil); err != nil {
		t.Fatalf("the app's own event on a run of an internal graph's version not registered here: %v", err)
	}
}

// mustEngine returns a new engine closed at the end of the test.
func mustEngine(t *testing.T, opts engine.Options) *engine.Engine {
	t.Helper()
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// uncheckedGraph is a graph version that checks no event payload (it does not implement
// graphrun.EventChecker): a process of an older release, which stored events it could not
// check.
type uncheckedGraph struct{ durable.Graph }

// Issue #32: an event stored without its check (by a process of an older release that could
// not check it) and refused by the check when the run's wait takes it up is consumed and
// recorded as event_refused with the reason; the run keeps waiting — its wait timer still
// runs — and a valid event completes it. The run is never failed by it.
func TestEngine_UncheckedEvent_RefusedWhenApplied_RunKeepsWaiting(t *testing.T) {
	t.Parallel()
	for _, timed := range []bool{false, true} {
		t.Run(map[bool]string{false: "no timeout", true: "bounded wait"}[timed], func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			opts := engine.Options{Registry: regOf(t, expenseGraph(t)), Clock: clk.now, SweepInterval: -1}
			if timed {
				opts.Policies = map[string]engine.GraphPolicy{"expenses": {WaitTimeout: time.Hour}}
			}
			r := newRig(t, opts, false)
			id := r.start(t, "expenses", "", `{"amount": 3}`)
			r.drive(t)
			old := r.deploy(t, clk.now, uncheckedGraph{expenseGraph(t)})
			if err := old.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": "yes"}`)); err != nil {
				t.Fatalf("the older release's raise: %v", err)
			}
			r.drive(t)
			run := r.wait(t, id)
			if cs := string(run.CustomStatus); run.RuntimeStatus != engine.StatusRunning || !strings.Contains(cs, `"waiting_for_event":"approval"`) {
				t.Fatalf("after the refused event: %s %s %s, want still waiting for approval", run.RuntimeStatus, run.Output, cs)
			}
			var refused []engine.HistoryEvent
			for _, h := range r.history(t, id) {
				if h.Type == engine.HistoryEventRefused {
					refused = append(refused, h)
				}
			}
			want := `{"event_name":"approval","inbox_seq":1,"error":"invalid payload of event 'approval': field 'approved': expected bool, got JSON string"}`
			if len(refused) != 1 || string(refused[0].Data) != want || refused[0].Name != "apply_event" {
				t.Fatalf("refused rows %+v, want one with %s", refused, want)
			}
			if timed {
				clk.advance(2 * time.Hour)
				r.drive(t)
				run := r.wait(t, id)
				if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "wait for event 'approval' timed out") {
					t.Fatalf("after the deadline: %s %s, want the wait timed out", run.RuntimeStatus, run.Output)
				}
				return
			}
			if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": true, "reviewer": "r"}`)); err != nil {
				t.Fatal(err)
			}
			r.drive(t)
			if run := r.wait(t, id); run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["reviewer"] != "r" {
				t.Fatalf("%s %s, want completed with the valid approval", run.RuntimeStatus, run.Output)
			}
		})
	}
}

// Issue #21: history rows name step kinds as users read them in failure messages, never the
// internal fg_ names; an event row keeps the event's name.
func TestEngine_History_UserFacingNames(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, expenseGraph(t))
	id := r.start(t, "expenses", "", `{}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": true}`)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	seen := map[string]string{}
	for _, h := range r.history(t, id) {
		seen[h.Type] = h.Name
	}
	for typ, want := range map[string]string{
		engine.HistoryRunStarted: "orchestrator", engine.HistoryNodeCompleted: "execute_node", engine.HistoryRouteResolved: "resolve_route",
		engine.HistoryEventApplied: "apply_event", engine.HistoryEventReceived: "approval", engine.HistoryRunCompleted: "orchestrator",
	} {
		if seen[typ] != want {
			t.Errorf("%s row named %q, want %q", typ, seen[typ], want)
		}
	}
}
