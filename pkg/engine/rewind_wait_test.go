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

// waitGraph builds name: n0 waits for "approval" (within timeout, when set, failing the run
// when it passes), whose handler calls the model (o); then n1 (terminal).
func waitGraph(t testing.TB, name string, o *outage, timeout time.Duration) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("n0")
	wait := func(context.Context, counterState) (any, error) {
		d := durable.WaitForEvent("approval", "n1")
		if timeout > 0 {
			d = d.Within(timeout, "")
		}
		return d, nil
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddNode("n0", func(_ context.Context, s counterState) (any, error) {
		_ = o.call("n0")
		return durable.Update{"n": s.N + 1}, nil
	}, durable.WithHandlerName("test.rw."+name+".n0"), durable.WithRoute(wait), durable.WithRouteName("test.rw."+name+".route")))
	must(b.AddNode("n1", incr, durable.WithHandlerName("test.rw."+name+".n1"), durable.Terminal()))
	must(b.AddEventHandler("approval", func(_ context.Context, s counterState, _ json.RawMessage) (any, error) {
		if err := o.call("approval"); err != nil {
			return nil, err
		}
		return durable.Update{"limit": 1}, nil
	}))
	g, err := b.Build()
	must(err)
	return g
}

// TestEngine_RewindRun_EventHandlerFailure: an event whose handler failed is applied again by
// the rewind; the node before the wait does not run again.
func TestEngine_RewindRun_EventHandlerFailure(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, waitGraph(t, "rw_event", o, 0))
	id := r.start(t, "rw_event", "rw-event", `{"n":0}`)
	r.drive(t)
	o.down.Store(true)
	if err := r.e.RaiseEvent(context.Background(), id, "approval", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusFailed)
	o.down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	if st := stateOf(t, run); st["n"] != 2.0 || st["limit"] != 1.0 {
		t.Fatalf("state %v", st)
	}
	if o.count("n0") != 1 || o.count("approval") != 2 {
		t.Fatalf("calls n0 %d approval %d, want 1 and 2", o.count("n0"), o.count("approval"))
	}
	if rows := rowTypes(r.history(t, id)); !strings.Contains(rows, "run_failed:n0 run_rewound:n0 event_applied:n1") {
		t.Fatalf("history %s", rows)
	}
}

// TestEngine_RewindRun_WaitTimedOut: a wait whose timeout failed the run starts again with
// its timeout from the rewind: an event within it resumes the run, and without one it fails
// again at the new deadline.
func TestEngine_RewindRun_WaitTimedOut(t *testing.T) {
	t.Parallel()
	o := newOutage()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, waitGraph(t, "rw_timeout", o, time.Hour))
	ctx := context.Background()
	for _, id := range []string{"rw-timeout-event", "rw-timeout-again"} {
		r.start(t, "rw_timeout", id, `{"n":0}`)
	}
	r.drive(t)
	clk.advance(2 * time.Hour)
	r.drive(t)
	for _, id := range []string{"rw-timeout-event", "rw-timeout-again"} {
		assertRunStatus(t, r, id, engine.StatusFailed)
		if err := r.e.RewindRun(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	r.drive(t)
	assertRunStatus(t, r, "rw-timeout-event", engine.StatusRunning)
	clk.advance(30 * time.Minute) // within the wait's new hour
	r.drive(t)
	if err := r.e.RaiseEvent(ctx, "rw-timeout-event", "approval", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertRunStatus(t, r, "rw-timeout-event", engine.StatusCompleted)
	assertRunStatus(t, r, "rw-timeout-again", engine.StatusRunning)
	clk.advance(31 * time.Minute) // past the new deadline
	r.drive(t)
	run := assertRunStatus(t, r, "rw-timeout-again", engine.StatusFailed)
	if !strings.Contains(string(run.Output), "timed out") {
		t.Fatalf("output %s", run.Output)
	}
	if c := strings.Count(rowTypes(r.history(t, "rw-timeout-again")), "run_failed"); c != 2 {
		t.Fatalf("%d run_failed rows, want 2: %s", c, rowTypes(r.history(t, "rw-timeout-again")))
	}
}
