package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// The engine's own checks of a fan-out (its width, its branches' visits under MaxSteps) and
// its join (which failure it takes, and when).

// routedGraph is a durable.Graph that is not a GraphRegistration: g, with the route of node
// replaced by decide. Nothing checks its decisions but the engine.
type routedGraph struct {
	durable.Graph
	node   string
	decide func() durable.RouteDecision
}

func (g routedGraph) ResolveRoute(ctx context.Context, node string, state json.RawMessage) (durable.RouteDecision, error) {
	if node == g.node {
		return g.decide(), nil
	}
	return g.Graph.ResolveRoute(ctx, node, state)
}

// nopFanGraph builds name: plan → sum (terminal), and a node nop that changes nothing, for
// branches of decisions made by hand (routedGraph).
func nopFanGraph(t testing.TB, name string) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("plan")
	nop := func(context.Context, counterState) (any, error) { return nil, nil }
	for _, err := range []error{
		b.AddNode("plan", nop, durable.WithRoute(func(context.Context, counterState) (any, error) { return durable.Parallel("sum", "nop"), nil })),
		b.AddNode("nop", nop, durable.WithNext("sum")),
		b.AddNode("sum", incr, durable.Terminal()),
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

// nopBranches is a fan-out of n branches of node nop joining at sum.
func nopBranches(n int) durable.RouteDecision {
	bs := make([]durable.Branch, n)
	for i := range bs {
		bs[i] = durable.Branch{Node: "nop", Item: json.RawMessage(fmt.Sprint(i))}
	}
	return durable.RouteDecision{Action: durable.ActionParallel, JoinNode: "sum", Branches: bs}
}

// A Graph that is not a GraphRegistration may return any decision: the engine refuses a
// fan-out that its branch items could not carry (wider than durable.MaxBranches, a branch
// without a node, an item that is no JSON or above durable.MaxBranchItemBytes) before
// anything of it is committed, and the run fails at the route, as a GraphRegistration's would.
func TestEngine_FanOut_CustomGraphInvalidFanOut_FailsAtTheRouteBeforeCommit(t *testing.T) {
	t.Parallel()
	with := func(n int, edit func(d *durable.RouteDecision)) durable.RouteDecision {
		d := nopBranches(n)
		edit(&d)
		return d
	}
	tests := []struct {
		name string
		d    durable.RouteDecision
		want string
	}{
		{"wider than the limit", nopBranches(300), "resolve_route failed: parallel fan-out of 300 branches is above the limit of 256"},
		{"no join node", with(2, func(d *durable.RouteDecision) { d.JoinNode = "" }), "resolve_route failed: action 'parallel' requires join_node"},
		{"a branch without a node", with(3, func(d *durable.RouteDecision) { d.Branches[1].Node = "" }), "resolve_route failed: parallel branch 1 requires a node"},
		{"an item that is not JSON", with(2, func(d *durable.RouteDecision) { d.Branches[0].Item = json.RawMessage("{") }),
			"resolve_route failed: parallel branch 0 item is not valid JSON"},
		{"an item above the limit", with(2, func(d *durable.RouteDecision) {
			d.Branches[1].Item = json.RawMessage(`"` + strings.Repeat("x", durable.MaxBranchItemBytes) + `"`)
		}), fmt.Sprintf("resolve_route failed: parallel branch 1 item of %d bytes is above the limit of %d bytes", durable.MaxBranchItemBytes+2, durable.MaxBranchItemBytes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := routedGraph{Graph: nopFanGraph(t, "custom"), node: "plan", decide: func() durable.RouteDecision { return tc.d }}
			r := newRig(t, engine.Options{}, false, g)
			id := r.start(t, "custom", "", `{}`)
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != tc.want {
				t.Fatalf("status %s output %s, want failed with %q", run.RuntimeStatus, run.Output, tc.want)
			}
			if got := historyTypes(t, r, id); got != "run_started node_completed run_failed" {
				t.Fatalf("history %s, want the node's completion and the run's failure, no fan-out", got)
			}
		})
	}
}

// The engine's width limit is the one the branch items' codec holds to: a custom graph's
// fan-out of durable.MaxBranches branches, whose last branch's item is the highest index a
// branch item may carry, completes.
func TestEngine_FanOut_CustomGraphAtTheWidthLimit_Completes(t *testing.T) {
	t.Parallel()
	g := routedGraph{Graph: nopFanGraph(t, "custom"), node: "plan", decide: func() durable.RouteDecision { return nopBranches(durable.MaxBranches) }}
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "custom", "", `{}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	if n := rowsOfType(t, r, id, engine.HistoryBranchCompleted); n != durable.MaxBranches {
		t.Fatalf("%d branches completed, want %d", n, durable.MaxBranches)
	}
}

// rowsOfType counts the history rows of type typ of run id.
func rowsOfType(t testing.TB, r *rig, id, typ string) int {
	t.Helper()
	n := 0
	for _, ev := range r.history(t, id) {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// callCountingFan is fanGraph whose branch handler counts its calls.
func callCountingFan(t testing.TB, name string) (durable.GraphRegistration[fanState], *atomic.Int32) {
	var calls atomic.Int32
	return fanGraph(t, name, func(ctx context.Context, s fanState) (any, error) {
		calls.Add(1)
		return fanWork(ctx, s)
	}), &calls
}

// MaxSteps counts every visit, a fan-out's branches included: plan, 10 branches and sum are
// 12 visits. A fan-out whose branches would pass the budget is not committed: the run fails
// at its route with the max-steps error, and no branch runs.
func TestEngine_MaxSteps_CountsBranches_FanOutPastTheBudgetIsNotCommitted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		maxSteps int
		status   engine.RunStatus
		calls    int32
		history  string // the history's last rows
	}{
		{12, engine.StatusCompleted, 10, "branches_joined node_completed route_resolved run_completed"},
		{11, engine.StatusFailed, 10, "branches_joined run_failed"}, // the join node's visit is the 12th
		{10, engine.StatusFailed, 0, "run_started node_completed run_failed"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.maxSteps), func(t *testing.T) {
			t.Parallel()
			g, calls := callCountingFan(t, "fan")
			r := newRig(t, engine.Options{MaxSteps: tc.maxSteps}, false, g)
			id := r.start(t, "fan", "", fanInput(10))
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != tc.status || calls.Load() != tc.calls {
				t.Fatalf("status %s after %d branch visits (output %s), want %s after %d", run.RuntimeStatus, calls.Load(), run.Output, tc.status, tc.calls)
			}
			if want := fmt.Sprintf("orchestrator failed: max steps exceeded: graph 'fan' made %d node visits without completing", tc.maxSteps); tc.status == engine.StatusFailed && outputString(t, run) != want {
				t.Fatalf("output %s, want %q", run.Output, want)
			}
			if got := historyTypes(t, r, id); !strings.HasSuffix(got, tc.history) {
				t.Fatalf("history %s, want it to end with %s", got, tc.history)
			}
		})
	}
}

// A failure route through a fan-out counts the fan-out's branches: a loop of a fan-out of 10
// whose branch 0 fails back to the fan-out's node makes 11 visits a round, so under MaxSteps
// 20 the second fan-out is refused and 10 branches ran, not 10 per round.
func TestEngine_MaxSteps_FailureRouteThroughAFanOut_CountsItsBranches(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	b := durable.NewManifestBuilder[fanState]("fanloop")
	b.SetEntrypoint("plan")
	for _, err := range []error{
		b.AddNode("plan", func(context.Context, fanState) (any, error) { return nil, nil },
			durable.WithRoute(func(_ context.Context, s fanState) (any, error) { return durable.Map("sum", "work", s.Items), nil })),
		b.AddNode("work", func(ctx context.Context, s fanState) (any, error) {
			calls.Add(1)
			if info, _ := durable.BranchFrom(ctx); info.Index == 0 {
				return nil, durable.NonRetryable(errors.New("source gone"))
			}
			return nil, nil
		}, durable.WithNext("sum"), durable.WithFailureRoute("plan")),
		b.AddNode("sum", func(context.Context, fanState) (any, error) { return nil, nil }, durable.Terminal()),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{MaxSteps: 20}, false, g)
	id := r.start(t, "fanloop", "", fanInput(10))
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	want := "orchestrator failed: max steps exceeded: graph 'fanloop' made 20 node visits without completing"
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want || calls.Load() != 10 {
		t.Fatalf("status %s after %d branch visits (output %s), want failed with %q after 10", run.RuntimeStatus, calls.Load(), run.Output, want)
	}
}

// failingBranch returns a branch handler of fanGraph whose branch 1 fails with how's error
// (nil: not by the handler's error), the others doing fanWork.
func failingBranch(how func(ctx context.Context, s fanState) (any, error)) durable.NodeFunc[fanState] {
	return func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			return how(ctx, s)
		}
		return fanWork(ctx, s)
	}
}

// branchFailedRows returns the data of the branch_failed rows of run id.
func branchFailedRows(t testing.TB, r *rig, id string) []string {
	t.Helper()
	var out []string
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryBranchFailed {
			out = append(out, string(ev.Data))
		}
	}
	return out
}

// Only a handler's own error takes a branch node's failure route: a branch that fails
// otherwise — an update that does not fit the state model, a result that cannot be stored, an
// branch whose worker died at every start — fails the run, as the same node's failure as a step does.
// The branch_failed row says which it was ("handler": true for the handler's error).
func TestEngine_FanOut_BranchFailureNotTheHandlersError_FailsTheRunDespiteItsFailureRoute(t *testing.T) {
	t.Parallel()
	killBranch1 := func(t *testing.T, r *rig, clk *fakeClock) {
		// Branch 1's worker dies in it every time, until it was started MaxStepStarts times.
		body := takeBranchMessage(t, r, 1)
		for count := int64(1); count <= 5; count++ {
			if died, err := deliverDying(r, body, count); !died {
				t.Fatalf("delivery %d returned (%v) instead of dying in the node", count, err)
			}
			clk.advance(r.e.Options().VisibilityTimeout)
		}
		if err := r.e.HandleWorkItem(t.Context(), body, 6); err != nil {
			t.Fatal(err)
		}
	}
	dying := func(ctx context.Context, s fanState) (any, error) {
		if b, _ := durable.BranchFrom(ctx); b.Index == 1 {
			runtime.Goexit()
		}
		return fanWork(ctx, s)
	}
	tests := []struct {
		name    string
		work    durable.NodeFunc[fanState]
		arm     func(t *testing.T, r *rig, clk *fakeClock)
		cause   string // the failure's message after "branch 1 of 3 (node 'work'): "
		handler bool
	}{
		{name: "the handler's error takes the route", handler: true,
			work: failingBranch(func(context.Context, fanState) (any, error) {
				return nil, durable.NonRetryable(errors.New("source gone"))
			}),
			cause: "source gone"},
		{name: "an update of an unknown field",
			work:  failingBranch(func(context.Context, fanState) (any, error) { return durable.Update{"totl": 1}, nil }),
			cause: "validate state"},
		{name: "a result that cannot be stored", work: fanWork, arm: func(_ *testing.T, r *rig, _ *fakeClock) {
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				for _, op := range ops {
					if p := op.Entity.Properties; p["Type"] == engine.HistoryBranchCompleted && strings.Contains(fmt.Sprint(p["Data"]), `"index":1,`) {
						return fmt.Errorf("entity of branch 1: %w", engine.ErrTooLarge)
					}
				}
				return nil
			}
		}, cause: "branch result cannot be stored"},
		{name: "a branch whose worker died at every start", work: dying, arm: killBranch1,
			cause: "started 5 times without completing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false, policyFanGraph(t, tc.work, durable.WithFailureRoute("rescue")))
			id := r.start(t, "fanpol", "", fanInput(3))
			if tc.arm != nil {
				tc.arm(t, r, clk)
			}
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			rows := branchFailedRows(t, r, id)
			if len(rows) != 1 {
				t.Fatalf("branch_failed rows %q, want one", rows)
			}
			if got := strings.Contains(rows[0], `"handler":true`); got != tc.handler {
				t.Errorf("branch_failed %s: handler %v, want %v", rows[0], got, tc.handler)
			}
			prefix := "branch 1 of 3 (node 'work'): " + tc.cause
			if tc.handler {
				if run.RuntimeStatus != engine.StatusCompleted || !strings.Contains(string(run.Output), "rescued work: "+prefix) {
					t.Fatalf("status %s output %s, want completed through the failure route", run.RuntimeStatus, run.Output)
				}
				return
			}
			if run.RuntimeStatus != engine.StatusFailed || !strings.HasPrefix(outputString(t, run), "execute_node failed: "+prefix) {
				t.Fatalf("status %s output %s, want failed with %q…", run.RuntimeStatus, run.Output, "execute_node failed: "+prefix)
			}
			if n := rowsOfType(t, r, id, engine.HistoryNodeFailed); n != 0 {
				t.Fatalf("%d node_failed rows: the failure route was taken", n)
			}
		})
	}
}

// A branch failure that is not its handler's error fails the run whatever the other
// branches did: a lower branch whose handler's error would take the failure route does not
// hide it.
func TestEngine_FanOut_NonHandlerFailureWinsOverALowerHandlersError(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, policyFanGraph(t, func(ctx context.Context, s fanState) (any, error) {
		switch info, _ := durable.BranchFrom(ctx); info.Index {
		case 0:
			return nil, durable.NonRetryable(errors.New("source gone"))
		case 2:
			return durable.Update{"totl": 1}, nil
		}
		return fanWork(ctx, s)
	}, durable.WithFailureRoute("rescue")))
	id := r.start(t, "fanpol", "", fanInput(3))
	r.driveOrder(t, func(int) int { return 0 })
	run, _ := r.e.GetRun(t.Context(), id)
	want := "execute_node failed: branch 2 of 3 (node 'work'): validate state fanState: field 'totl': unknown field in update"
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want {
		t.Fatalf("status %s output %s, want failed with %q", run.RuntimeStatus, run.Output, want)
	}
}

// twoFailing is a branch handler of fanGraph whose branches 1 and 3 fail with their handler's
// error naming them.
func twoFailing(ctx context.Context, s fanState) (any, error) {
	if info, _ := durable.BranchFrom(ctx); info.Index == 1 || info.Index == 3 {
		return nil, durable.NonRetryable(fmt.Errorf("boom %d", info.Index))
	}
	return fanWork(ctx, s)
}

// With two failed branches the run takes the lowest one's failure (its failure route, when it
// has one), whatever order the branches finish in; the join waits for every branch to settle,
// so the history holds every branch's row in every order, and the join is enqueued once, by
// the branch that settled last.
func TestEngine_FanOut_TwoFailedBranches_SameOutcomeInEveryOrder(t *testing.T) {
	t.Parallel()
	orders := map[string]func(*rand.Rand) func(int) int{
		"in order": func(*rand.Rand) func(int) int { return func(int) int { return 0 } },
		"reversed": func(*rand.Rand) func(int) int { return func(n int) int { return n - 1 } },
		"shuffled": func(rnd *rand.Rand) func(int) int { return func(n int) int { return rnd.IntN(n) } },
	}
	for _, route := range []bool{false, true} {
		for name, order := range orders {
			for seed := range uint64(4) {
				t.Run(fmt.Sprintf("route=%v/%s/%d", route, name, seed), func(t *testing.T) {
					t.Parallel()
					var r *rig
					var id string
					var calls atomic.Int32
					work := func(ctx context.Context, s fanState) (any, error) {
						calls.Add(1)
						return twoFailing(ctx, s)
					}
					if route {
						r = newRig(t, engine.Options{}, false, policyFanGraph(t, work, durable.WithFailureRoute("rescue")))
						id = r.start(t, "fanpol", "", fanInput(5))
					} else {
						r = newRig(t, engine.Options{}, false, fanGraph(t, "fan", work))
						id = r.start(t, "fan", "", fanInput(5))
					}
					var joins atomic.Int32
					r.fqueue.OnEnqueue = func(body []byte) (int, error) {
						if !strings.Contains(string(body), `"br":`) {
							joins.Add(1)
						}
						return 1, nil
					}
					r.driveOrder(t, order(rand.New(rand.NewPCG(seed, 39))))
					run, _ := r.e.GetRun(t.Context(), id)
					cause := "branch 1 of 5 (node 'work'): boom 1"
					switch {
					case route && (run.RuntimeStatus != engine.StatusCompleted || !strings.Contains(string(run.Output), `"note":"rescued work: `+cause+`"`)):
						t.Fatalf("status %s output %s, want completed through branch 1's failure route", run.RuntimeStatus, run.Output)
					case !route && (run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != "execute_node failed: "+cause):
						t.Fatalf("status %s output %s, want failed with branch 1's failure", run.RuntimeStatus, run.Output)
					}
					if c, f := rowsOfType(t, r, id, engine.HistoryBranchCompleted), rowsOfType(t, r, id, engine.HistoryBranchFailed); c != 3 || f != 2 {
						t.Fatalf("%d branches completed and %d failed before the join, want 3 and 2", c, f)
					}
					if n, j := calls.Load(), joins.Load(); n != 5 || j != 1 {
						t.Fatalf("the branch handler ran %d times and the join was enqueued %d times, want once per branch and once", n, j)
					}
				})
			}
		}
	}
}

// A plain work item that meets the region with a branch failed and others unsettled (the
// fan-out's own item redelivered) does not join it: it puts the unsettled branches back, and
// the join, once they have settled, takes the lowest failure.
func TestEngine_FanOut_PlainItemMeetingAFailureBeforeEveryBranchSettled_DoesNotJoin(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", twoFailing))
	id := r.start(t, "fan", "", fanInput(5))
	r.handleWhere(t, `"step":0`) // plan: the fan-out commits
	r.handleWhere(t, `"br":3,`)  // branch 3 fails first
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 2); err != nil {
		t.Fatal(err)
	}
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("status %s output %s after the plain item, want Running: branches 0, 1, 2 and 4 have not settled", run.RuntimeStatus, run.Output)
	}
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if want := "execute_node failed: branch 1 of 5 (node 'work'): boom 1"; run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want {
		t.Fatalf("status %s output %s, want failed with %q", run.RuntimeStatus, run.Output, want)
	}
}

// fenceRows returns the fan-out fences stored in run id's partition.
func fenceRows(t testing.TB, r *rig, id string) []string {
	t.Helper()
	page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: id, RowKeyFrom: "j", RowKeyTo: "k"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ent := range page.Entities {
		out = append(out, ent.RowKey)
	}
	return out
}

// A join that fails the run closes its region as a join that merges does: the fence goes, and
// the feed, which never moves past an open region's start, reaches the run's last row.
func TestEngine_FanOut_FailingJoinClosesItsRegion(t *testing.T) {
	t.Parallel()
	for name, work := range map[string]durable.NodeFunc[fanState]{
		"a failed branch": failingBranch(func(context.Context, fanState) (any, error) { return nil, errors.New("boom") }),
		"a merge that fails": func(ctx context.Context, s fanState) (any, error) {
			return durable.Update{"note": "clash"}, nil // every branch sets note, which has no reducer
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", work))
			id := r.start(t, "fan", "", fanInput(3))
			r.drive(t)
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusFailed {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			if fences := fenceRows(t, r, id); len(fences) != 0 {
				t.Fatalf("fences left after the run failed: %q", fences)
			}
			page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(page.Items); !page.End || n == 0 || page.Items[n-1].Type != engine.HistoryRunFailed || page.NextAfter != page.Items[n-1].Sequence {
				t.Fatalf("feed of the failed run: end %v, next_after %d, items %+v; want it to reach run_failed", page.End, page.NextAfter, page.Items)
			}
		})
	}
}

// A step's node whose failure is not its handler's error — an update that does not fit the
// state model, a result the state merge does not support — fails the run although the node has
// a failure route: only a handler's own error takes it.
func TestEngine_FailureRoute_NotTakenForAStepsNonHandlerErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		work durable.NodeFunc[counterState]
		want string
	}{
		{"an update of an unknown field", func(context.Context, counterState) (any, error) { return durable.Update{"nn": 1}, nil }, "execute_node failed: validate state"},
		{"an unsupported result", func(context.Context, counterState) (any, error) { return 42, nil }, "execute_node failed: unsupported state merge result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now}, false, policyGraph(t, "sf", tc.work, durable.WithFailureRoute("fallback")))
			id := r.start(t, "sf", "", `{}`)
			run := settle(t, r, clk, id)
			if run.RuntimeStatus != engine.StatusFailed || !strings.HasPrefix(outputString(t, run), tc.want) {
				t.Fatalf("status %s output %s, want failed with %q…", run.RuntimeStatus, run.Output, tc.want)
			}
			if n := rowsOfType(t, r, id, engine.HistoryNodeFailed); n != 0 {
				t.Fatalf("%d node_failed rows: the failure route was taken", n)
			}
		})
	}
}
