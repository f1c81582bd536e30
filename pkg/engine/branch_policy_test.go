package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// policyFanGraph is fanGraph whose branch node "work" carries opts, with a node "rescue" that
// records the failure it was sent for and completes.
func policyFanGraph(t testing.TB, work durable.NodeFunc[fanState], opts ...durable.NodeOption) durable.GraphRegistration[fanState] {
	t.Helper()
	b := durable.NewManifestBuilder[fanState]("fanpol")
	b.SetEntrypoint("plan")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddNode("plan", func(context.Context, fanState) (any, error) { return nil, nil },
		durable.WithRoute(func(_ context.Context, s fanState) (any, error) { return durable.Map("sum", "work", s.Items), nil })))
	must(b.AddNode("work", work, append([]durable.NodeOption{durable.WithNext("sum")}, opts...)...))
	must(b.AddNode("sum", func(context.Context, fanState) (any, error) { return durable.Update{"note": "joined"}, nil }, durable.Terminal()))
	must(b.AddNode("rescue", func(ctx context.Context, _ fanState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		if info.Failure == nil {
			return nil, errors.New("rescue reached without a failure")
		}
		return durable.Update{"note": "rescued " + info.Failure.Node + ": " + info.Failure.Error}, nil
	}, durable.Terminal()))
	must(b.Reduce("results", durable.Append))
	must(b.Reduce("scores", durable.MergeKeys))
	g, err := b.Build()
	must(err)
	return g
}

// A branch that fails for good takes its node's failure route: the run continues at the
// failure node with the failure in StepInfo, instead of failing.
func TestEngine_FanOut_FailedBranchTakesFailureRoute(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, policyFanGraph(t, func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 2 {
			return nil, durable.NonRetryable(errors.New("source gone"))
		}
		return fanWork(ctx, s)
	}, durable.WithFailureRoute("rescue")))
	id := r.start(t, "fanpol", "", fanInput(3))
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s, want Completed through the failure route", run.RuntimeStatus, run.Output)
	}
	if !strings.Contains(string(run.Output), "rescued work: branch 2 of 3 (node 'work'): source gone") {
		t.Fatalf("output %s", run.Output)
	}
	var routed bool
	for _, ev := range r.history(t, id) {
		routed = routed || ev.Type == engine.HistoryNodeFailed
	}
	if !routed {
		t.Fatalf("no %s row in %v", engine.HistoryNodeFailed, r.history(t, id))
	}
}

// A branch retries under its node's own policy (over the graph's, which has none here), and
// an error marked NonRetryable is not retried.
func TestEngine_FanOut_BranchUsesItsNodePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		permanent bool
		calls     int32
		status    engine.RunStatus
	}{
		{"retried", false, 3 + 3, engine.StatusCompleted},   // branch 1 fails twice, its third attempt succeeds; 3 others
		{"non-retryable", true, 1 + 3, engine.StatusFailed}, // branch 1 once; 3 others
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var calls, fails atomic.Int32
			r := newRig(t, engine.Options{Clock: clk.now}, false, policyFanGraph(t, func(ctx context.Context, s fanState) (any, error) {
				calls.Add(1)
				if info, _ := durable.BranchFrom(ctx); info.Index == 1 && fails.Add(1) <= 2 {
					err := errors.New("busy")
					if tc.permanent {
						err = durable.NonRetryable(err)
					}
					return nil, err
				}
				return fanWork(ctx, s)
			}, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second})))
			id := r.start(t, "fanpol", "", fanInput(4))
			for range 4 {
				r.drive(t)
				clk.advance(time.Minute)
			}
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != tc.status || calls.Load() != tc.calls {
				t.Fatalf("status %s after %d calls (output %s), want %s after %d", run.RuntimeStatus, calls.Load(), run.Output, tc.status, tc.calls)
			}
		})
	}
}
