package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// sleepGraph builds name: nap decides decide(state) → wake (terminal, adds 1 to n). Its event
// "poke" adds 100 to n.
func sleepGraph(t testing.TB, name string, decide func(counterState) durable.RouteDecision) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("nap")
	if err := b.AddNode("nap", func(context.Context, counterState) (any, error) { return nil, nil },
		durable.WithRoute(func(_ context.Context, s counterState) (any, error) { return decide(s), nil })); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("wake", incr, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("poke", func(_ context.Context, s counterState, _ json.RawMessage) (any, error) {
		return durable.Update{"n": s.N + 100}, nil
	}); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestEngine_Sleep_ContinuesAtTheWakeTimeNotBefore(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	start := clk.now()
	tests := []struct {
		name     string
		decision durable.RouteDecision
		until    time.Time
	}{
		{"relative", durable.Sleep(90*time.Minute, "wake"), start.Add(90 * time.Minute)},
		{"absolute", durable.SleepUntil(start.Add(90*time.Minute), "wake"), start.Add(90 * time.Minute)},
		// Longer than the queue's MaxDelay: the capped timer comes early and is put back.
		{"beyond the queue's max delay", durable.Sleep(30*24*time.Hour, "wake"), start.Add(30 * 24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false, sleepGraph(t, "sl", func(counterState) durable.RouteDecision { return tt.decision }))
			id := r.start(t, "sl", "", `{}`)
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusRunning {
				t.Fatalf("after the sleep decision: %s", run.RuntimeStatus)
			}
			var started engine.HistoryEvent
			for _, ev := range r.history(t, id) {
				if ev.Type == engine.HistorySleepStarted {
					started = ev
				}
			}
			want := `{"until":"` + tt.until.UTC().Format(time.RFC3339Nano) + `","next_node":"wake"}`
			if started.Node != "nap" || string(started.Data) != want {
				t.Fatalf("sleep_started row %+v %s, want %s", started, started.Data, want)
			}
			// Step through the sleep an hour at a time: the run must not wake a moment early.
			for clk.now().Add(time.Hour).Before(tt.until) {
				clk.advance(time.Hour)
				r.drive(t)
				if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
					t.Fatalf("%s before the wake time: %s", tt.until.Sub(clk.now()), run.RuntimeStatus)
				}
			}
			clk.ns.Store(tt.until.UnixNano())
			r.drive(t)
			run, _ = r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["n"] != float64(1) {
				t.Fatalf("at the wake time: %s %s", run.RuntimeStatus, run.Output)
			}
			if got := strings.Join(checkHistory(t, r.history(t, id)), " "); got !=
				"run_started:nap node_completed:nap route_resolved:nap sleep_started:nap node_completed:wake route_resolved:wake run_completed:wake" {
				t.Errorf("history %s", got)
			}
		})
	}
}

func TestEngine_Sleep_InThePastOrZeroContinuesAtOnce(t *testing.T) {
	t.Parallel()
	for name, d := range map[string]durable.RouteDecision{
		"zero delay": durable.Sleep(0, "wake"),
		"past until": durable.SleepUntil(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), "wake"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false, sleepGraph(t, "sl0", func(counterState) durable.RouteDecision { return d }))
			id := r.start(t, "sl0", "", `{}`)
			if n := r.drive(t); n != 1 {
				t.Errorf("%d work items, want the run to go on in the same one", n)
			}
			if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s: the clock did not move, the run should not wait", run.RuntimeStatus)
			}
		})
	}
}

func TestEngine_Sleep_EventsWaitInTheInboxAndCancelEndsIt(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, sleepGraph(t, "sle", func(counterState) durable.RouteDecision {
		return durable.Sleep(time.Hour, "wake")
	}))
	id := r.start(t, "sle", "", `{}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "poke", nil); err != nil {
		t.Fatal(err)
	}
	if n := r.drive(t); n != 0 {
		t.Errorf("an event woke the sleeping run: %d items handled", n)
	}
	clk.advance(time.Hour)
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["n"] != float64(1) {
		t.Fatalf("status %s output %s: the event must not be applied without a wait", run.RuntimeStatus, run.Output)
	}

	id = r.start(t, "sle", "", `{}`)
	r.drive(t)
	if err := r.e.CancelRun(t.Context(), id, "no more naps"); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Hour)
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusTerminated {
		t.Fatalf("status %s after a cancel during the sleep", run.RuntimeStatus)
	}
}

func TestEngine_Sleep_InvalidDecisionFailsTheRun(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		d    durable.RouteDecision
		want string
	}{
		"unknown next":   {durable.Sleep(time.Hour, "nowhere"), "resolve_route failed: route decision references unknown node 'nowhere' in graph 'slx'"},
		"negative":       {durable.Sleep(-time.Hour, "wake"), "resolve_route failed: sleep delay must not be negative"},
		"no next":        {durable.Sleep(time.Hour, ""), "resolve_route failed: action 'sleep' requires next_node"},
		"too long":       {durable.Sleep(durable.MaxSleep+time.Hour, "wake"), "resolve_route failed: sleep delay must be at most 100 years"},
		"too far":        {durable.SleepUntil(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), "wake"), "resolve_route failed: sleep until must be before 2200-01-01"},
		"delay and time": {durable.RouteDecision{Action: durable.ActionSleep, NextNode: "wake", Delay: time.Hour, Until: time.Now()}, "resolve_route failed: sleep takes a delay or an until time, not both"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false, sleepGraph(t, "slx", func(counterState) durable.RouteDecision { return tt.d }))
			id := r.start(t, "slx", "", `{}`)
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != tt.want {
				t.Fatalf("status %s output %s, want %q", run.RuntimeStatus, run.Output, tt.want)
			}
		})
	}
}
