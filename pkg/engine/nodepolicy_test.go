package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// policyGraph builds name: work → done (terminal), plus fallback → done for failure routes; work runs handler under opts. done and fallback record in "pad" the failure they saw
// (StepInfo.Failure) as "<node>|<error>", or "none".
func policyGraph(t testing.TB, name string, handler durable.NodeFunc[counterState], opts ...durable.NodeOption) durable.GraphRegistration[counterState] {
	t.Helper()
	record := func(tag string) durable.NodeFunc[counterState] {
		return func(ctx context.Context, s counterState) (any, error) {
			info, _ := durable.StepInfoFrom(ctx)
			seen := "none"
			if f := info.Failure; f != nil {
				seen = f.Node + "|" + f.Error
			}
			return durable.Update{"pad": tag + ":" + seen}, nil
		}
	}
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("work")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// work's route falls back to done (a route keeps fallback reachable without a failure route).
	route := func(context.Context, counterState) (any, error) { return nil, nil }
	must(b.AddNode("work", handler, append([]durable.NodeOption{durable.WithHandlerName("p.work"), durable.WithNext("done"), durable.WithRoute(route)}, opts...)...))
	must(b.AddNode("done", record("done"), durable.WithHandlerName("p.done"), durable.Terminal()))
	must(b.AddNode("fallback", record("fallback"), durable.WithHandlerName("p.fallback"), durable.WithNext("done")))
	g, err := b.Build()
	must(err)
	return g
}

// failing returns a handler that fails its first n calls with err(i), then adds 1 to n, and
// the StepInfos of its calls.
func failing(n int, errOf func(i int) error) (durable.NodeFunc[counterState], func() []durable.StepInfo) {
	var mu sync.Mutex
	var seen []durable.StepInfo
	h := func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		mu.Lock()
		seen = append(seen, info)
		i := len(seen)
		mu.Unlock()
		if i <= n {
			return nil, errOf(i)
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	return h, func() []durable.StepInfo {
		mu.Lock()
		defer mu.Unlock()
		return append([]durable.StepInfo(nil), seen...)
	}
}

// settle drives r's queue and moves the clock past every timer until the run is finished.
func settle(t *testing.T, r *rig, clk *fakeClock, id string) engine.Run {
	t.Helper()
	for range 100 {
		r.drive(t)
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.RuntimeStatus.Finished() {
			return run
		}
		clk.advance(time.Hour)
	}
	t.Fatal("run never finished")
	return engine.Run{}
}

func historyTypes(t *testing.T, r *rig, id string) string {
	t.Helper()
	var out []string
	for _, ev := range r.history(t, id) {
		out = append(out, ev.Type)
	}
	return strings.Join(out, " ")
}

func TestEngine_NodeRetryPolicy_ReplacesTheGraphsForItsNode(t *testing.T) {
	t.Parallel()
	flakyErr := func(int) error { return errors.New("flaky") }
	tests := []struct {
		name    string
		graph   engine.RetryPolicy // the graph's policy
		node    *durable.RetryPolicy
		fails   int
		status  engine.RunStatus
		retries int
	}{
		{"node retries where the graph does not", engine.RetryPolicy{}, &durable.RetryPolicy{MaxAttempts: 3}, 2, engine.StatusCompleted, 2},
		{"node's attempts bound it", engine.RetryPolicy{MaxAttempts: 10}, &durable.RetryPolicy{MaxAttempts: 2}, 2, engine.StatusFailed, 1},
		{"node turns retries off", engine.RetryPolicy{MaxAttempts: 10}, &durable.RetryPolicy{MaxAttempts: 1}, 1, engine.StatusFailed, 0},
		{"no node policy: the graph's", engine.RetryPolicy{MaxAttempts: 3}, nil, 2, engine.StatusCompleted, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, seen := failing(tt.fails, flakyErr)
			var opts []durable.NodeOption
			if tt.node != nil {
				opts = append(opts, durable.WithRetry(*tt.node))
			}
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"pol": {Retry: tt.graph}}}, false,
				policyGraph(t, "pol", h, opts...))
			id := r.start(t, "pol", "", `{}`)
			run := settle(t, r, clk, id)
			if run.RuntimeStatus != tt.status {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			if got := strings.Count(historyTypes(t, r, id), engine.HistoryNodeRetryScheduled); got != tt.retries {
				t.Errorf("%d retries, want %d", got, tt.retries)
			}
			for i, info := range seen() {
				if info.Attempt != i+1 || info.Step != 1 {
					t.Errorf("call %d saw attempt %d step %d", i+1, info.Attempt, info.Step)
				}
			}
		})
	}
}

func TestEngine_NonRetryable_FailsAtOnceUnderAnyPolicy(t *testing.T) {
	t.Parallel()
	h, seen := failing(5, func(i int) error { return durable.NonRetryable(fmt.Errorf("card declined (%d)", i)) })
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"nr": {Retry: engine.RetryPolicy{MaxAttempts: 5}}}}, false,
		policyGraph(t, "nr", h, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 5})))
	id := r.start(t, "nr", "", `{}`)
	run := settle(t, r, clk, id)
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != "execute_node failed: card declined (1)" {
		t.Fatalf("status %s output %s, want failed with the handler's message unchanged", run.RuntimeStatus, run.Output)
	}
	if n := len(seen()); n != 1 {
		t.Errorf("the handler ran %d times, want once", n)
	}
}

func TestEngine_FailureRoute_ContinuesAtTheFailureNodeWhichSeesTheFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		retry   durable.RetryPolicy
		errOf   func(int) error
		calls   int
		history string
	}{
		{"after the retries", durable.RetryPolicy{MaxAttempts: 2}, func(i int) error { return fmt.Errorf("down %d", i) }, 2,
			"run_started node_retry_scheduled node_failed node_completed route_resolved node_completed route_resolved run_completed"},
		{"non-retryable at once", durable.RetryPolicy{MaxAttempts: 5}, func(i int) error { return durable.NonRetryable(fmt.Errorf("down %d", i)) }, 1,
			"run_started node_failed node_completed route_resolved node_completed route_resolved run_completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, seen := failing(100, tt.errOf)
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false,
				policyGraph(t, "fr", h, durable.WithRetry(tt.retry), durable.WithFailureRoute("fallback")))
			id := r.start(t, "fr", "", `{"n":7}`)
			run := settle(t, r, clk, id)
			if run.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			want := fmt.Sprintf("down %d", tt.calls)
			// fallback saw the failure; done, reached from fallback, no longer does; the
			// failed node's state changes were never committed (n stays 7).
			if st := stateOf(t, run); st["pad"] != "done:none" || st["n"] != float64(7) {
				t.Errorf("final state %v", st)
			}
			if got := historyTypes(t, r, id); got != tt.history {
				t.Errorf("history\n %s\nwant\n %s", got, tt.history)
			}
			var failed, fallback engine.HistoryEvent
			for _, ev := range r.history(t, id) {
				switch {
				case ev.Type == engine.HistoryNodeFailed:
					failed = ev
				case ev.Type == engine.HistoryNodeCompleted && ev.Node == "fallback":
					fallback = ev
				}
			}
			if failed.Node != "work" || failed.Name != "execute_node" ||
				string(failed.Data) != `{"error":"`+want+`","failure_node":"fallback"}` {
				t.Errorf("node_failed row %+v %s", failed, failed.Data)
			}
			if !strings.Contains(string(fallback.Data), `"pad":"fallback:work|`+want+`"`) {
				t.Errorf("fallback saw %s, want the failure of work", fallback.Data)
			}
			if n := len(seen()); n != tt.calls {
				t.Errorf("work ran %d times, want %d", n, tt.calls)
			}
		})
	}
}

func TestEngine_FailureRoute_NotTakenForRouteErrors(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[counterState]("rf")
	b.SetEntrypoint("work")
	route := func(context.Context, counterState) (any, error) { return nil, errors.New("route broke") }
	if err := b.AddNode("work", incr, durable.WithRoute(route), durable.WithFailureRoute("fallback")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("fallback", incr, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, g)
	id := r.start(t, "rf", "", `{}`)
	if run := settle(t, r, clk, id); run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != "resolve_route failed: route broke" {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
}

func TestEngine_NodeTimeout_BoundsEachAttempt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{}) // the ignoring handler's goroutine ends with the test
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name    string
		handler func(ctx context.Context, attempt int) (any, error)
	}{
		{"handler honours its context", func(ctx context.Context, _ int) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{"handler ignores its context", func(context.Context, int) (any, error) {
			<-release
			return durable.Update{"pad": "too late"}, nil
		}},
		{"late success is discarded", func(ctx context.Context, _ int) (any, error) {
			<-ctx.Done()
			return durable.Update{"pad": "too late"}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			calls := 0
			h := func(ctx context.Context, s counterState) (any, error) {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if n == 1 {
					if _, ok := ctx.Deadline(); !ok {
						return nil, durable.NonRetryable(errors.New("no deadline on the handler's context"))
					}
					return tt.handler(ctx, n)
				}
				return durable.Update{"n": s.N + 1}, nil
			}
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false,
				policyGraph(t, "to", h, durable.WithTimeout(20*time.Millisecond), durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2})))
			id := r.start(t, "to", "", `{}`)
			run := settle(t, r, clk, id)
			if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["pad"] != "done:none" {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			var retry engine.HistoryEvent
			for _, ev := range r.history(t, id) {
				if ev.Type == engine.HistoryNodeRetryScheduled {
					retry = ev
				}
			}
			if !strings.Contains(string(retry.Data), `"error":"node 'work' timed out after 20ms: context deadline exceeded"`) {
				t.Errorf("retry row %s, want the timeout", retry.Data)
			}
		})
	}
}

func TestEngine_NodeTimeout_NoRetryFailsTheRunNamingTheTimeout(t *testing.T) {
	t.Parallel()
	h := func(ctx context.Context, _ counterState) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, policyGraph(t, "to1", h, durable.WithTimeout(time.Millisecond)))
	id := r.start(t, "to1", "", `{}`)
	run := settle(t, r, clk, id)
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != "execute_node failed: node 'work' timed out after 1ms: context deadline exceeded" {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
}

// TestEngine_FailureRoute_HeadKeepsTheFailureAcrossRetriesOfTheFailureNode: the failure node's
// own retried attempts still see the failure; it is cleared when the failure node commits.
func TestEngine_FailureRoute_FailureNodeRetriesStillSeeIt(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var saw []string
	b := durable.NewManifestBuilder[counterState]("keep")
	b.SetEntrypoint("work")
	broken := func(context.Context, counterState) (any, error) { return nil, errors.New("broken") }
	fallback := func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		mu.Lock()
		defer mu.Unlock()
		saw = append(saw, fmt.Sprintf("%d:%v", info.Attempt, info.Failure != nil && info.Failure.Error == "broken"))
		if len(saw) == 1 {
			return nil, errors.New("fallback flaky")
		}
		return nil, nil
	}
	if err := errors.Join(
		b.AddNode("work", broken, durable.WithFailureRoute("fallback")),
		b.AddNode("fallback", fallback, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2}), durable.WithNext("end")),
		b.AddNode("end", fallback, durable.Terminal()),
	); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, g)
	id := r.start(t, "keep", "", `{}`)
	if run := settle(t, r, clk, id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(saw, " "); got != "1:true 2:true 1:false" {
		t.Errorf("fallback attempts and end saw %q, want the failure on both attempts of fallback only", got)
	}
}

// customGraph hides GraphRegistration's NodePolicies: a Graph that only forwards the interface.
type customGraph struct{ durable.Graph }

func TestEngine_FailureRoute_CustomGraphWithoutNodePolicies_UsesItsManifest(t *testing.T) {
	t.Parallel()
	h, _ := failing(1, func(int) error { return errors.New("x") })
	g := customGraph{policyGraph(t, "cg", h, durable.WithFailureRoute("fallback"))}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, g)
	id := r.start(t, "cg", "", `{}`)
	if run := settle(t, r, clk, id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	if got := historyTypes(t, r, id); !strings.Contains(got, engine.HistoryNodeFailed) {
		t.Errorf("history %s", got)
	}
}

// TestEngine_FailureRoute_LongErrorIsCutOnTheHead: the head keeps a bounded failure for
// StepInfo.Failure; the history row keeps the whole message.
func TestEngine_FailureRoute_LongErrorIsCutOnTheHead(t *testing.T) {
	t.Parallel()
	long := "x" + strings.Repeat("é", 20000) // 40001 bytes: the 4096th is the first of an é's two
	h, _ := failing(1, func(int) error { return errors.New(long) })
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, policyGraph(t, "long", h, durable.WithFailureRoute("fallback")))
	id := r.start(t, "long", "", `{}`)
	if run := settle(t, r, clk, id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	for _, ev := range r.history(t, id) {
		switch {
		case ev.Type == engine.HistoryNodeFailed:
			var d struct{ Error string }
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Error != long {
				t.Errorf("node_failed row keeps %d bytes (%v), want all %d", len(d.Error), err, len(long))
			}
		case ev.Type == engine.HistoryNodeCompleted && ev.Node == "fallback":
			var d struct {
				State struct{ Pad string }
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			seen := strings.TrimPrefix(d.State.Pad, "fallback:work|")
			if len(seen) != 4095 || !strings.HasPrefix(long, seen) {
				t.Errorf("fallback saw %d bytes of the error (%q…), want its first 4095: the 4 KiB cut, back to a whole character",
					len(seen), seen[:min(len(seen), 8)])
			}
		}
	}
}

// panickyGraph is a custom Graph whose ExecuteNode panics outside any handler, with the
// policies of the graph it wraps.
type panickyGraph struct {
	durable.GraphRegistration[counterState]
}

func (panickyGraph) ExecuteNode(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	panic("custom graph broke")
}

// TestEngine_NodeTimeout_CustomGraphPanicFailsTheRun: under a node timeout the handler runs
// on a goroutine of its own; a panic there fails the run instead of the process.
func TestEngine_NodeTimeout_CustomGraphPanicFailsTheRun(t *testing.T) {
	t.Parallel()
	g := panickyGraph{policyGraph(t, "panicky", incr, durable.WithTimeout(time.Minute))}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, g)
	id := r.start(t, "panicky", "", `{}`)
	if run := settle(t, r, clk, id); run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != "execute_node failed: node handler panicked: custom graph broke" {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
}

// TestEngine_FailureRoute_LoopEndsAtMaxSteps: a failed visit that takes its failure route
// counts as a node visit, so a failure route back to a node that keeps failing ends at the
// step limit instead of looping.
func TestEngine_FailureRoute_LoopEndsAtMaxSteps(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[counterState]("loop")
	b.SetEntrypoint("work")
	broken := func(context.Context, counterState) (any, error) { return nil, errors.New("broken") }
	if err := b.AddNode("work", broken, durable.WithFailureRoute("work"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, MaxSteps: 3}, false, g)
	id := r.start(t, "loop", "", `{}`)
	run := settle(t, r, clk, id)
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(outputString(t, run), "max steps exceeded") {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	if n := strings.Count(historyTypes(t, r, id), engine.HistoryNodeFailed); n != 3 {
		t.Errorf("%d node_failed rows, want 3", n)
	}
}

// uncancelledStore passes every call on without the caller's cancellation, as a request
// already sent lands whatever becomes of its caller: what a handling writes after its context
// ended is then kept out of storage only by the engine's own checks.
type uncancelledStore struct{ engine.Store }

func (s uncancelledStore) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	return s.Store.Get(context.WithoutCancel(ctx), pk, rk)
}

func (s uncancelledStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	return s.Store.Submit(context.WithoutCancel(ctx), ops)
}

func (s uncancelledStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	return s.Store.Query(context.WithoutCancel(ctx), q)
}

// A shutdown while a timed node runs is the step's infrastructure stopping, not the node
// timing out, nor failing: the handling returns the context's error, nothing is committed (no
// retry, no failure) even by a store that would still write, and the next delivery runs the
// node's first attempt again.
func TestEngine_NodeTimeout_ShutdownDuringTheNodeIsNoTimeout(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var shutdown context.CancelFunc // guarded by mu; the first call cancels its handling
	var attempts []int              // guarded by mu
	h := func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		mu.Lock()
		attempts = append(attempts, info.Attempt)
		stop := shutdown
		shutdown = nil
		mu.Unlock()
		if stop != nil {
			stop() // the process shuts down while the node runs
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false,
		policyGraph(t, "timed", h, durable.WithTimeout(time.Hour), durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3})))
	r.fstore.Store = uncancelledStore{r.fstore.Store}
	id := r.start(t, "timed", "", `{}`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	mu.Lock()
	shutdown = cancel
	mu.Unlock()
	if err := r.e.HandleWorkItem(ctx, encodeItemAt(id, 1, 0), 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("the handling shut down mid-node returned %v, want context.Canceled", err)
	}
	if got, want := historyTypes(t, r, id), "run_started"; got != want {
		t.Fatalf("history after the shutdown: %s, want %s: the shutdown was committed as the node's outcome", got, want)
	}
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 0), 2); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	if run := assertStatus(t, r, id, engine.StatusCompleted); stateOf(t, run)["n"] != 1.0 {
		t.Fatalf("output %s", run.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(attempts) != "[1 1]" {
		t.Errorf("the node ran as attempts %v, want [1 1]: a shutdown is no failed attempt", attempts)
	}
}
