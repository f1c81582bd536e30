package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// parentState is the state of the parent graphs of the child run tests.
type parentState struct {
	N     int           `json:"n"`
	Child string        `json:"child"` // graph the route starts a child of
	Into  string        `json:"into"`  // field the child's final state goes into
	Kid   *counterState `json:"kid"`
	Seen  string        `json:"seen"` // StepInfo.ChildRunID in the resume node
	Hold  bool          `json:"hold"` // "after" waits for "release" before "end"
}

// parentGraph builds name: "prep" (adds 1 to n, then starts a child of graph s.Child with
// {"n": s.N}, resuming at "after") → "after" (records the child id it sees; completes, or
// with s.Hold waits for "release" and goes on to "end").
func parentGraph(t testing.TB, name string) durable.GraphRegistration[parentState] {
	t.Helper()
	b := durable.NewManifestBuilder[parentState](name)
	b.SetEntrypoint("prep")
	prep := func(_ context.Context, s parentState) (any, error) { return durable.Update{"n": s.N + 1}, nil }
	route := func(_ context.Context, s parentState) (any, error) {
		return durable.StartChild(s.Child, counterState{N: s.N}, "after").Into(s.Into), nil
	}
	if err := b.AddNode("prep", prep, durable.WithHandlerName("test.parent.prep"), durable.WithRoute(route), durable.WithRouteName("test.parent.route")); err != nil {
		t.Fatal(err)
	}
	after := func(ctx context.Context, _ parentState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		return durable.Update{"seen": info.ChildRunID}, nil
	}
	hold := func(_ context.Context, s parentState) (any, error) {
		if s.Hold {
			return durable.WaitForEvent("release", "end"), nil
		}
		return "__complete__", nil
	}
	if err := b.AddNode("after", after, durable.WithHandlerName("test.parent.after"), durable.WithRoute(hold), durable.WithRouteName("test.parent.hold")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("end", func(context.Context, parentState) (any, error) { return nil, nil }, durable.WithHandlerName("test.parent.end"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("release", func(context.Context, parentState, json.RawMessage) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// waitingKid builds "kid_wait": n0 waits for "go", then n1 (terminal).
func waitingKid(t testing.TB) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState]("kid_wait")
	b.SetEntrypoint("n0")
	wait := func(context.Context, counterState) (any, error) { return durable.WaitForEvent("go", "n1"), nil }
	if err := b.AddNode("n0", incr, durable.WithHandlerName("test.kidwait.n0"), durable.WithRoute(wait), durable.WithRouteName("test.kidwait.route")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("n1", incr, durable.WithHandlerName("test.kidwait.n1"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("go", func(context.Context, counterState, json.RawMessage) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// strictState is the state of "kid_strict", which needs a token no parent gives it.
type strictState struct {
	Token string `json:"token" durable:"required"`
}

// strictKid builds "kid_strict": one terminal node over strictState.
func strictKid(t testing.TB) durable.GraphRegistration[strictState] {
	t.Helper()
	b := durable.NewManifestBuilder[strictState]("kid_strict")
	b.SetEntrypoint("n0")
	if err := b.AddNode("n0", func(context.Context, strictState) (any, error) { return nil, nil }, durable.WithHandlerName("test.strict.n0"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// childGraphs are the graphs of the child run tests: the parent, a child of two steps, a
// child that waits for an event, and a child whose node fails.
func childGraphs(t testing.TB) []durable.Graph {
	fail := func(context.Context, counterState) (any, error) { return nil, errors.New("kid broke") }
	return []durable.Graph{parentGraph(t, "parent"), chainGraph(t, "kid", 2, nil), waitingKid(t), chainGraph(t, "kid_fail", 1, fail), strictKid(t)}
}

// newChildRig is a rig with the child run graphs on a fake clock (rechecks are timers).
func newChildRig(t testing.TB, opts engine.Options) (*rig, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	if opts.Clock == nil {
		opts.Clock = clk.now
	}
	return newRig(t, opts, false, childGraphs(t)...), clk
}

// startParent starts run id of "parent" whose route starts a child of graph, its final state
// into field into.
func startParent(t testing.TB, r *rig, id, graph, into string) string {
	t.Helper()
	in, _ := json.Marshal(parentState{N: 1, Child: graph, Into: into})
	return r.start(t, "parent", id, string(in))
}

// kidOf returns the id of the child run step 1 of a parent started as generation 1 starts.
func kidOf(t testing.TB, r *rig, parent string) string {
	t.Helper()
	run, err := r.e.GetRun(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.ChildInstanceIDs) != 1 {
		t.Fatalf("parent %s lists children %v, want one", parent, run.ChildInstanceIDs)
	}
	return run.ChildInstanceIDs[0]
}

// assertParentResumed checks that parent completed once with the child's final state in
// "kid", having started exactly one child, completed once and seen it in its resume node.
func assertParentResumed(t testing.TB, r *rig, parent string) {
	t.Helper()
	run := assertStatus(t, r, parent, engine.StatusCompleted)
	kid := kidOf(t, r, parent)
	st := stateOf(t, run)
	if got, _ := json.Marshal(st["kid"]); string(got) != `{"limit":0,"n":4,"pad":""}` || st["seen"] != kid || st["n"] != 2.0 {
		t.Fatalf("parent state %v", st)
	}
	rows := strings.Join(checkHistory(t, r.history(t, parent)), " ")
	want := "run_started:prep node_completed:prep route_resolved:prep child_started:prep child_finished:prep child_completed:after " +
		"node_completed:after route_resolved:after run_completed:after"
	if rows != want && rows != strings.Replace(want, "child_finished:prep ", "", 1) {
		t.Fatalf("parent history = %s", rows)
	}
	child := assertStatus(t, r, kid, engine.StatusCompleted)
	if child.ParentInstanceID != parent || countHistory(t, r, kid, engine.HistoryRunStarted) != 1 || countHistory(t, r, kid, engine.HistoryNodeCompleted) != 2 {
		t.Fatalf("child %s: parent %q, history %v", kid, child.ParentInstanceID, checkHistory(t, r.history(t, kid)))
	}
	var meta map[string]any
	if err := json.Unmarshal(child.Input.Metadata, &meta); err != nil || meta["parent_instance_id"] != parent {
		t.Fatalf("child metadata %s", child.Input.Metadata)
	}
	// Exactly one child: no other run names this parent.
	list, err := r.e.ListRuns(context.Background(), engine.RunQuery{GraphName: "kid"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, run := range list.Runs {
		if full, _ := r.e.GetRun(context.Background(), run.InstanceID); full.ParentInstanceID == parent {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d children of %s, want 1", n, parent)
	}
	assertNoOrphans(t, r, parent)
	assertNoOrphans(t, r, kid)
}

func TestEngine_ChildRun_ResumesParentWithItsFinalState(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p1", "kid", "kid")
	r.drive(t)
	assertParentResumed(t, r, id)
	kid := kidOf(t, r, id)
	if kid != engine.ChildInstanceID(id, 1, nonceOf(t, r, id), 1) || !strings.HasPrefix(kid, "child~p1~1.") {
		t.Fatalf("child id %q", kid)
	}
}

// nonceOf reads a run's nonce from its head row.
func nonceOf(t testing.TB, r *rig, id string) string {
	t.Helper()
	ent, err := r.store.Get(context.Background(), id, "r")
	if err != nil {
		t.Fatal(err)
	}
	return ent.Properties["Nonce"].(string)
}

func TestEngine_ChildRun_WhileItRuns_ParentWaitsForIt(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-wait", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	p, ok := assertStatus(t, r, id, engine.StatusRunning).Progress()
	if !ok || p.WaitingForChild != kid || p.ResumeNode != "after" || p.WaitingForEvent != "" {
		t.Fatalf("parent progress %+v", p)
	}
	if ev, ok := assertStatus(t, r, kid, engine.StatusRunning).WaitingFor(); !ok || ev != "go" {
		t.Fatalf("child waits for %q", ev)
	}
	// The child's id is no event a client can raise on the parent.
	var unknown *engine.UnknownEventError
	if err := r.e.RaiseEvent(t.Context(), id, kid, nil); !errors.As(err, &unknown) {
		t.Fatalf("raise the child's notice by hand: %v", err)
	}
	if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	st := stateOf(t, assertStatus(t, r, id, engine.StatusCompleted))
	if kidState, _ := st["kid"].(map[string]any); kidState["n"] != 4.0 {
		t.Fatalf("parent state %v", st)
	}
}

func TestEngine_ChildRun_WorkerDiesBetweenParentCommitAndChildStart_RecheckStartsItOnce(t *testing.T) {
	t.Parallel()
	// Values above 16 characters go to the payload store: the child's input too, which the
	// recheck reads back from the link row.
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute, InlineLimit: 16})
	// The worker "dies" right after the parent's commit: every write of the child's start
	// fails, and so does the enqueue of the parent's recheck, so the handling fails.
	var dead atomic.Bool
	dead.Store(true)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if dead.Load() && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) || dead.Load() && strings.HasPrefix(ops[0].Entity.PartitionKey, "§due") {
			return enginetest.ErrInjected
		}
		return nil
	}
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if dead.Load() {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	id := startParentUndispatched(t, r, "p-dies")
	dead.Store(true)
	r.drive(t)
	p, _ := assertStatus(t, r, id, engine.StatusRunning).Progress()
	if _, err := r.e.GetRun(t.Context(), p.WaitingForChild); !errors.Is(err, engine.ErrRunNotFound) || p.WaitingForChild == "" {
		t.Fatalf("the child should not exist yet: waiting for %q, %v", p.WaitingForChild, err)
	}
	if link, err := r.store.Get(t.Context(), id, "l000001-0000000000000001"); err != nil || link.Properties["DataRef"] == "" {
		t.Fatalf("link row %v, %v: want its input spilled", link.Properties, err)
	}
	dead.Store(false)
	// The work item comes back after its visibility timeout; the recheck finds no child.
	clk.advance(2 * time.Minute)
	r.drive(t)
	assertParentResumed(t, r, id)
}

// startParentUndispatched starts a parent whose first item reaches the queue although the
// queue is about to fail (its start is made before the faults are armed).
func startParentUndispatched(t testing.TB, r *rig, id string) string {
	t.Helper()
	on, before := r.fqueue.OnEnqueue, r.fstore.BeforeSubmit
	r.fqueue.OnEnqueue, r.fstore.BeforeSubmit = nil, nil
	defer func() { r.fqueue.OnEnqueue, r.fstore.BeforeSubmit = on, before }()
	return startParent(t, r, id, "kid", "kid")
}

func TestEngine_ChildRun_LostNotice_RecheckResumesParent(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	// Every notice to the parent is lost (its event batch fails).
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if notifies(ops) && ops[0].Entity.PartitionKey == "p-lost" {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := startParent(t, r, "p-lost", "kid", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	assertStatus(t, r, kid, engine.StatusCompleted)
	assertStatus(t, r, id, engine.StatusRunning)
	clk.advance(time.Minute)
	r.drive(t)
	sweepLater(t, r, clk) // the lost notices' due rows
	assertParentResumed(t, r, id)
}

// sweepLater runs the repair pass once every due row written so far is due.
func sweepLater(t testing.TB, r *rig, clk *fakeClock) {
	t.Helper()
	clk.advance(2 * r.e.Options().RepairAfter)
	if _, err := r.e.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
}

func TestEngine_ChildRun_LongChild_RechecksBackOff(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var rechecks atomic.Int32
	r.fstore.BeforeGet = func(pk, rk string) error {
		if rk == "r" && strings.HasPrefix(pk, engine.ChildRunPrefix) {
			rechecks.Add(1)
		}
		return nil
	}
	id := startParent(t, r, "p-long", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	rechecks.Store(0)
	for range 48 * 60 { // two days, a minute at a time
		clk.advance(time.Minute)
		r.drive(t)
	}
	// About 1+2+4+...+64 minutes, then hourly: well under a hundred looks in two days.
	if n := rechecks.Load(); n < 40 || n > 60 {
		t.Fatalf("%d rechecks of the running child in two days", n)
	}
	if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
}

func TestEngine_ChildRun_AmbiguousWrites_ExactlyOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pick func([]engine.Op) bool
	}{
		{"the parent's commit that starts the child", insertsHistory(engine.HistoryChildStarted)},
		{"the child's start", func(ops []engine.Op) bool {
			return insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix)
		}},
		{"the child's last commit", func(ops []engine.Op) bool {
			return insertsHistory(engine.HistoryRunCompleted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix)
		}},
		{"the notice to the parent", notifies},
		{"the parent's resume", insertsHistory(engine.HistoryChildCompleted)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachAmbiguity(t, tt.pick, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
				clk := newFakeClock()
				r := mk(engine.Options{Clock: clk.now, RepairAfter: time.Minute})
				for _, g := range childGraphs(t) {
					if err := r.reg.Register(g); err != nil {
						t.Fatal(err)
					}
				}
				arm()
				id := startParent(t, r, "p-amb", "kid", "kid")
				r.drive(t)
				clk.advance(time.Minute) // a recheck covers a notice the fault swallowed
				r.drive(t)
				clk.advance(3 * time.Minute) // items of handlings that failed come back
				r.drive(t)
				assertParentResumed(t, r, id)
			})
		})
	}
}

func TestEngine_ChildRun_DuplicateDeliveries_OneChild(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Concurrency: 4, Clock: clk.now}, true, childGraphs(t)...)
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 3, nil }
	var ids []string
	for _, id := range []string{"d1", "d2", "d3", "d4", "d5"} {
		ids = append(ids, startParent(t, r, id, "kid", "kid"))
	}
	for _, id := range ids {
		r.waitFor(t, id, func(run engine.Run) bool { return run.RuntimeStatus.Finished() })
		assertParentResumed(t, r, id)
	}
}

func TestEngine_ChildRun_ChildFails_ParentFailsNamingIt(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-fail", "kid_fail", "")
	r.drive(t)
	kid := kidOf(t, r, id)
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	want := "orchestrator failed: child run '" + kid + "' of graph 'kid_fail' failed: execute_node failed: kid broke"
	if msg != want {
		t.Fatalf("parent failure %q\nwant %q", msg, want)
	}
}

func TestEngine_ChildRun_ChildCancelled_ParentFails(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-kc", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	if err := r.e.CancelRun(t.Context(), kid, "not needed"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	if want := "orchestrator failed: child run '" + kid + "' of graph 'kid_wait' was terminated: not needed"; msg != want {
		t.Fatalf("parent failure %q", msg)
	}
}

func TestEngine_ChildRun_CancelParent_CancelsChild(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-cancel", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusTerminated)
	if msg := outputString(t, assertStatus(t, r, kid, engine.StatusTerminated)); msg != "parent run 'p-cancel' was cancelled: stop" {
		t.Fatalf("child reason %q", msg)
	}
}

func TestEngine_ChildRun_Purge(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{})
	// A finished child whose parent still waits for it stays.
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if notifies(ops) && ops[0].Entity.PartitionKey == "p-purge" {
			return enginetest.ErrInjected // its notice is lost: the parent waits for its recheck
		}
		return nil
	}
	id := startParent(t, r, "p-purge", "kid", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	var awaited *engine.ChildAwaitedError
	if err := r.e.PurgeRun(t.Context(), kid); !errors.As(err, &awaited) || awaited.ParentInstanceID != id {
		t.Fatalf("purge of an awaited child: %v", err)
	}
	r.fstore.BeforeSubmit = nil
	if err := r.e.CancelRun(t.Context(), id, "enough"); err != nil {
		t.Fatal(err)
	}
	// Purging the parent purges its children.
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	sweepLater(t, r, clk) // the lost notices' due rows
	for _, run := range []string{id, kid} {
		if _, err := r.e.GetRun(t.Context(), run); !errors.Is(err, engine.ErrRunNotFound) {
			t.Fatalf("run %s after the purge: %v", run, err)
		}
		enginetest.CheckNoOrphanRows(t, r.store, r.e, run)
	}
}

func TestEngine_ChildRun_PurgeParent_CancelsAndPurgesAnActiveChild(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-active", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	// The cancel that would have reached the child is lost (its worker died).
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunTerminated)(ops) && ops[0].Entity.PartitionKey == kid {
			return enginetest.ErrInjected
		}
		return nil
	}
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.fstore.BeforeSubmit = nil
	assertStatus(t, r, kid, engine.StatusRunning)
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), kid); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("active child after the parent's purge: %v", err)
	}
}

func TestEngine_ChildRun_CannotStart_ParentFailsAtTheStep(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, graph, into, want string }{
		{"unknown graph", "nope", "", "orchestrator failed: cannot start child run: unknown graph 'nope'"},
		{"input its model refuses", "kid_strict", "", "orchestrator failed: cannot start child run of graph 'kid_strict': invalid input: validate state strictState: field 'token': "},
		{"unknown into field", "kid", "kidd", "resolve_route failed: child run into references unknown state field 'kidd' of graph 'parent'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newChildRig(t, engine.Options{})
			id := startParent(t, r, "", tt.graph, tt.into)
			r.drive(t)
			msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
			if !strings.HasPrefix(msg, tt.want) {
				t.Fatalf("failure %q\nwant %q", msg, tt.want)
			}
			if run, _ := r.e.GetRun(t.Context(), id); len(run.ChildInstanceIDs) != 0 {
				t.Fatalf("children %v of a parent whose child could not start", run.ChildInstanceIDs)
			}
		})
	}
}

func TestEngine_ChildRun_IDTakenByAnotherRun_ParentFails(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		// Just before the parent's commit, another run takes the child's id.
		if insertsHistory(engine.HistoryChildStarted)(ops) {
			for _, op := range ops {
				if op.Entity.Properties["Type"] == engine.HistoryChildStarted {
					var d struct {
						ID string `json:"child_instance_id"`
					}
					_ = json.Unmarshal([]byte(op.Entity.Properties["Data"].(string)), &d)
					if _, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "kid", InstanceID: d.ID}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	id := startParent(t, r, "p-taken", "kid", "kid")
	r.drive(t)
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	if !strings.HasPrefix(msg, "orchestrator failed: cannot start child run: instance id 'child~p-taken~") || !strings.HasSuffix(msg, "' is taken by another run") {
		t.Fatalf("failure %q", msg)
	}
}

func TestEngine_ChildRun_ChildHasItsParentsOwner(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	in, _ := json.Marshal(parentState{N: 1, Child: "kid", Into: "kid"})
	if _, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "parent", InstanceID: "p-own", Input: in,
		Metadata: json.RawMessage(`{"owner":"alice"}`)}); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	kid := kidOf(t, r, "p-own")
	child := assertStatus(t, r, kid, engine.StatusCompleted)
	if string(child.Input.Metadata) != `{"parent_instance_id":"p-own","owner":"alice"}` {
		t.Fatalf("child metadata %s", child.Input.Metadata)
	}
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Owner: "alice"})
	if err != nil || len(page.Runs) != 2 {
		t.Fatalf("alice's runs: %d, %v", len(page.Runs), err)
	}
}

func TestEngine_ChildRun_FailingEnqueue_SweepDispatchesTheChild(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var drop atomic.Bool
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		if drop.Load() && strings.Contains(string(body), engine.ChildRunPrefix) {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	drop.Store(true)
	id := startParent(t, r, "p-enq", "kid", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	assertStatus(t, r, kid, engine.StatusPending)
	drop.Store(false)
	clk.advance(2 * time.Minute)
	if n, err := r.e.Sweep(t.Context()); err != nil || n < 1 {
		t.Fatalf("sweep dispatched %d (%v)", n, err)
	}
	r.drive(t)
	assertParentResumed(t, r, id)
}

func TestEngine_ChildRun_RedeliveredRechecks_NeverPoisonTheWait(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute, MaxStepStarts: 2})
	id := startParent(t, r, "p-redeliver", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	// Each recheck of the parent is delivered as a redelivery (its worker "died" before).
	for i := range 5 {
		clk.advance(time.Hour)
		msgs, err := r.queue.Receive(t.Context(), 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := r.e.HandleWorkItem(t.Context(), m.Body, int64(i+2)); err != nil {
				t.Fatal(err)
			}
			_ = r.queue.Delete(t.Context(), m)
		}
	}
	assertStatus(t, r, id, engine.StatusRunning)
	if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
}

// inboxRows returns the inbox rows of run id.
func inboxRows(t testing.TB, r *rig, id string) int {
	t.Helper()
	page, err := r.store.Query(context.Background(), engine.Query{PartitionKey: id, RowKeyFrom: "i", RowKeyTo: "j"})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Entities)
}

func TestEngine_ChildRun_TwoRechecksRace_TheChildStartsOnce(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	// The first start of the child fails: the parent waits for its recheck.
	var heads atomic.Int32
	var second func()
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if !insertsHistory(engine.HistoryRunStarted)(ops) || !strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) {
			return nil
		}
		switch heads.Add(1) {
		case 1:
			return enginetest.ErrInjected
		case 2:
			second() // another worker's recheck starts the child while this one's start is in flight
		}
		return nil
	}
	id := startParent(t, r, "p-race", "kid", "kid")
	r.drive(t)
	clk.advance(time.Minute)
	second = func() {
		if err := r.e.HandleWorkItem(context.Background(), encodeItemAt(id, 1, 1), 2); err != nil {
			t.Error(err)
		}
	}
	r.drive(t)
	if heads.Load() != 3 {
		t.Fatalf("%d starts of the child, want 3 (a failed one, then two racing)", heads.Load())
	}
	clk.advance(time.Minute)
	r.drive(t)
	sweepLater(t, r, clk) // the failed start's due and index rows
	assertParentResumed(t, r, id)
}

func TestEngine_ChildRun_NoticeAfterTheParentWentOn_IsDropped(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var fired atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if notifies(ops) && ops[0].Entity.PartitionKey == "p-late" && fired.CompareAndSwap(false, true) {
			// The notice is slow: the parent's recheck reads the finished child first and
			// goes on (to wait for "release").
			clk.advance(time.Minute)
			if err := r.e.HandleWorkItem(context.Background(), encodeItemAt("p-late", 1, 1), 1); err != nil {
				return err
			}
		}
		return nil
	}
	in, _ := json.Marshal(parentState{N: 1, Child: "kid", Into: "kid", Hold: true})
	id := r.start(t, "parent", "p-late", string(in))
	r.drive(t)
	if !fired.Load() {
		t.Fatal("no notice was raised")
	}
	if ev, ok := assertStatus(t, r, id, engine.StatusRunning).WaitingFor(); !ok || ev != "release" {
		t.Fatalf("parent waits for %q", ev)
	}
	if n := countHistory(t, r, id, engine.HistoryChildFinished); n != 0 {
		t.Fatalf("a late notice was stored: %d %s rows", n, engine.HistoryChildFinished)
	}
}

func TestEngine_ChildRun_NoticeDuringTheResume_ResumeRebasesPastIt(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	atCommit, noticed := make(chan struct{}), make(chan struct{})
	var noticeHeld, resumeHeld, noticeLanded atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		switch {
		case notifies(ops) && ops[0].Entity.PartitionKey == "p-mid" && noticeHeld.CompareAndSwap(false, true):
			// The notice waits until the parent's recheck, which found none, is about to
			// commit the resume.
			clk.advance(time.Minute)
			go func() {
				if err := r.e.HandleWorkItem(context.Background(), encodeItemAt("p-mid", 1, 1), 1); err != nil {
					t.Error(err)
				}
			}()
			<-atCommit
		case insertsHistory(engine.HistoryChildCompleted)(ops) && resumeHeld.CompareAndSwap(false, true):
			close(atCommit)
			<-noticed
		}
		return nil
	}
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		if notifies(ops) && ops[0].Entity.PartitionKey == "p-mid" && noticeLanded.CompareAndSwap(false, true) {
			close(noticed)
		}
		return nil
	}
	in, _ := json.Marshal(parentState{N: 1, Child: "kid", Into: "kid", Hold: true})
	id := r.start(t, "parent", "p-mid", string(in))
	r.drive(t)
	r.waitFor(t, id, func(run engine.Run) bool { _, ok := run.WaitingFor(); return ok })
	if n := inboxRows(t, r, id); n != 0 || countHistory(t, r, id, engine.HistoryChildFinished) != 1 || countHistory(t, r, id, engine.HistoryChildCompleted) != 1 {
		t.Fatalf("the notice stored during the resume: %d inbox rows, history %v", n, checkHistory(t, r.history(t, id)))
	}
	if err := r.e.RaiseEvent(t.Context(), id, "release", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
}

func TestEngine_ChildRun_ParentCancelledWhileItsChildStarts_ChildCancelled(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	var once atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) && once.CompareAndSwap(false, true) {
			// The parent is cancelled after it stored its wait, before its child exists: the
			// cancel finds no child to reach.
			if err := r.e.CancelRun(context.Background(), "p-race-cancel", "stop"); err != nil {
				return err
			}
		}
		return nil
	}
	id := startParent(t, r, "p-race-cancel", "kid", "kid")
	r.drive(t)
	assertStatus(t, r, id, engine.StatusTerminated)
	kid := kidOf(t, r, id)
	if msg := outputString(t, assertStatus(t, r, kid, engine.StatusTerminated)); msg != "parent run 'p-race-cancel' finished (Terminated) before its child started" {
		t.Fatalf("child reason %q", msg)
	}
}

func TestEngine_ChildRun_WorkerDiesBeforeTheParentCommits_NoChildUntilTheStepCommits(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var crashed atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryChildStarted)(ops) && crashed.CompareAndSwap(false, true) {
			return enginetest.ErrInjected // the route decided on a child; the worker dies before its commit
		}
		return nil
	}
	id := startParent(t, r, "p-crash", "kid", "kid")
	r.drive(t)
	if page, err := r.e.ListRuns(t.Context(), engine.RunQuery{GraphName: "kid"}); err != nil || len(page.Runs) != 0 {
		t.Fatalf("a child exists before its parent's step committed: %d runs, %v", len(page.Runs), err)
	}
	clk.advance(2 * time.Minute) // the item comes back; the step runs again and names the same child
	r.drive(t)
	assertParentResumed(t, r, id)
}
