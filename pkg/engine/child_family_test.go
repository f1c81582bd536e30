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

// famState is the state of the family graphs: a run starts kids children one after the
// other, each of graph child, while levels is not 0; each child gets kids and levels - 1 (a
// negative levels never ends). With hold, a run that starts no more children waits for "go"
// before it completes.
type famState struct {
	N        int    `json:"n"`    // children started and finished so far
	Kids     int    `json:"kids"` // children to start
	Levels   int    `json:"levels"`
	Child    string `json:"child"` // the children's graph ("" for the run's own)
	Hold     bool   `json:"hold"`
	Released bool   `json:"released"`
	Seen     string `json:"seen"` // the failure the rescue node saw: "<node>|<error>"
}

// famGraph builds name: "spawn" starts a child (resuming at "spawned", which adds 1 to n and
// goes back to "spawn") until n reaches kids, then completes (or, with hold, waits for "go"
// and goes back to "spawn" released). With routed, spawn's failure route is "rescue", which
// records the failure it sees and completes.
func famGraph(t testing.TB, name string, routed bool) durable.GraphRegistration[famState] {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	b := durable.NewManifestBuilder[famState](name)
	b.SetEntrypoint("spawn")
	route := func(_ context.Context, s famState) (any, error) {
		if s.Levels == 0 || s.N >= s.Kids {
			if s.Hold && !s.Released {
				return durable.WaitForEvent("go", "spawn"), nil
			}
			return "__complete__", nil
		}
		child := s.Child
		if child == "" {
			child = name
		}
		return durable.StartChild(child, famState{Kids: s.Kids, Levels: s.Levels - 1, Hold: s.Hold}, "spawned"), nil
	}
	opts := []durable.NodeOption{durable.WithHandlerName("test." + name + ".spawn"), durable.WithRoute(route), durable.WithRouteName("test." + name + ".route")}
	if routed {
		opts = append(opts, durable.WithFailureRoute("rescue"))
	}
	must(b.AddNode("spawn", func(context.Context, famState) (any, error) { return nil, nil }, opts...))
	must(b.AddNode("spawned", func(_ context.Context, s famState) (any, error) { return durable.Update{"n": s.N + 1}, nil },
		durable.WithHandlerName("test."+name+".spawned"), durable.WithNext("spawn")))
	must(b.AddEventHandler("go", func(context.Context, famState, json.RawMessage) (any, error) {
		return durable.Update{"released": true}, nil
	}))
	if routed {
		rescue := func(ctx context.Context, _ famState) (any, error) {
			info, _ := durable.StepInfoFrom(ctx)
			if f := info.Failure; f != nil {
				return durable.Update{"seen": f.Node + "|" + f.Error}, nil
			}
			return durable.Update{"seen": "none"}, nil
		}
		must(b.AddNode("rescue", rescue, durable.WithHandlerName("test."+name+".rescue"), durable.Terminal()))
	}
	g, err := b.Build()
	must(err)
	return g
}

// newFamilyRig is a child rig with the family graphs: "fam" and "fam_routed" (its failure
// route taken), next to the child graphs.
func newFamilyRig(t testing.TB, opts engine.Options) (*rig, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	if opts.Clock == nil {
		opts.Clock = clk.now
	}
	gs := append(childGraphs(t), famGraph(t, "fam", false), famGraph(t, "fam_routed", true))
	return newRig(t, opts, false, gs...), clk
}

// startFam starts run id of graph with s as its input.
func startFam(t testing.TB, r *rig, graph, id string, s famState) string {
	t.Helper()
	in, _ := json.Marshal(s)
	return r.start(t, graph, id, string(in))
}

// famOf decodes the state of a finished family run.
func famOf(t testing.TB, run engine.Run) famState {
	t.Helper()
	var out struct {
		State famState `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil {
		t.Fatalf("decode output %s: %v", run.Output, err)
	}
	return out.State
}

func TestEngine_ChildRun_ChildFails_TakesTheNodesFailureRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, child string
		cancel      bool
		want        string // the failure the rescue node sees, after the child's id
	}{
		{"failed", "kid_fail", false, "' of graph 'kid_fail' failed: execute_node failed: kid broke"},
		{"cancelled", "kid_wait", true, "' of graph 'kid_wait' was terminated: not needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newFamilyRig(t, engine.Options{})
			id := startFam(t, r, "fam_routed", "fr-"+tt.name, famState{Kids: 1, Levels: 1, Child: tt.child})
			r.drive(t)
			kid := kidOf(t, r, id)
			if tt.cancel {
				if err := r.e.CancelRun(t.Context(), kid, "not needed"); err != nil {
					t.Fatal(err)
				}
				r.drive(t)
			}
			run := assertStatus(t, r, id, engine.StatusCompleted)
			if got, want := famOf(t, run).Seen, "spawn|child run '"+kid+tt.want; got != want {
				t.Fatalf("the rescue node saw %q\nwant %q", got, want)
			}
			rows := strings.Join(checkHistory(t, r.history(t, id)), " ")
			want := "run_started:spawn node_completed:spawn route_resolved:spawn child_started:spawn " + engine.HistoryChildFinished + ":spawn " +
				"node_failed:spawn node_completed:rescue route_resolved:rescue run_completed:rescue"
			if rows != want {
				t.Fatalf("history %s\nwant    %s", rows, want)
			}
		})
	}
}

func TestEngine_ChildRun_Notice_IsAChildFinishedRowNotAnEvent(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{})
	id := startParent(t, r, "p-notice", "kid_wait", "kid")
	r.drive(t)
	kid := kidOf(t, r, id)
	if err := r.e.RaiseEvent(t.Context(), kid, "go", nil); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	var notices []engine.HistoryEvent
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryEventReceived {
			t.Fatalf("the child's notice is an event_received row: %+v %s", ev, ev.Data)
		}
		if ev.Type == engine.HistoryChildFinished {
			notices = append(notices, ev)
		}
	}
	want := `{"child_instance_id":"` + kid + `","runtime_status":"Completed"}`
	if len(notices) != 1 || string(notices[0].Data) != want || notices[0].Name != "orchestrator" || notices[0].Node != "prep" {
		t.Fatalf("notices %+v, want one %s row with %s", notices, engine.HistoryChildFinished, want)
	}
	if ent, err := r.store.Get(t.Context(), id, "r"); err != nil || ent.Properties["InboxSeq"] != int64(0) {
		t.Fatalf("the parent's inbox was used: %v %v", ent.Properties["InboxSeq"], err)
	}
}

func TestEngine_ChildRun_RecheckOnAnInstanceWithoutTheChildsGraph_ParksTheParent(t *testing.T) {
	t.Parallel()
	r, clk := newChildRig(t, engine.Options{RepairAfter: time.Minute, MaxStepStarts: 2})
	// The first start of the child fails: the parent waits for its recheck.
	var starts atomic.Int32
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) && starts.Add(1) == 1 {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := startParent(t, r, "p-roll", "kid", "kid")
	r.drive(t)
	// A rolling deploy: the instance that picks up the rechecks has the parent's graph but not
	// the child's.
	old := r.deploy(t, clk.now, parentGraph(t, "parent"))
	for range 4 {
		clk.advance(5 * time.Minute)
		if old.drive(t) == 0 {
			t.Fatal("no recheck reached the instance without the child's graph")
		}
		run := assertStatus(t, r, id, engine.StatusRunning)
		if p, ok := run.Progress(); !ok || p.WaitingForChild == "" {
			t.Fatalf("parent status %s", run.CustomStatus)
		}
	}
	if ent, err := r.store.Get(t.Context(), id, "r"); err != nil || ent.Properties["Restarts"] != int64(0) {
		t.Fatalf("the parked recheck counted deaths: %v %v", ent.Properties["Restarts"], err)
	}
	// An instance with the child's graph picks the run up again.
	clk.advance(5 * time.Minute)
	r.drive(t)
	sweepLater(t, r, clk) // the failed start's due and index rows
	assertParentResumed(t, r, id)
}

// familyRuns returns the ids of the runs of graph.
func familyRuns(t testing.TB, r *rig, graph string) []string {
	t.Helper()
	var ids []string
	q := engine.RunQuery{GraphName: graph, Limit: 1000}
	for {
		page, err := r.e.ListRuns(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range page.Runs {
			ids = append(ids, run.InstanceID)
		}
		if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
			return ids
		}
	}
}

func TestEngine_ChildRun_RunThatStartsItselfAsAChild_StopsAtTheDepthLimit(t *testing.T) {
	t.Parallel()
	r, _ := newFamilyRig(t, engine.Options{})
	id := startFam(t, r, "fam", "selfish", famState{Kids: 1, Levels: -1})
	r.drive(t)
	// The root and 8 levels of children; the deepest could not start a ninth.
	if runs := familyRuns(t, r, "fam"); len(runs) != 1+engine.DefaultMaxChildDepth {
		t.Fatalf("%d runs in the family, want %d", len(runs), 1+engine.DefaultMaxChildDepth)
	}
	msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
	want := "cannot start child run of graph 'fam': it would be 9 levels below its family's root run 'selfish', past the limit of 8 (MaxChildDepth)"
	if !strings.HasPrefix(msg, "orchestrator failed: child run '") || !strings.HasSuffix(msg, "failed: orchestrator failed: "+want) {
		t.Fatalf("root failure %q\nwant it to end with %q", msg, want)
	}
}

func TestEngine_ChildRun_FamilyPastMaxFamilyRuns_TheStartFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		copies int // deliveries of every work item
	}{
		{"every item once", 1},
		{"every item twice", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newFamilyRig(t, engine.Options{MaxFamilyRuns: 6})
			r.fqueue.OnEnqueue = func([]byte) (int, error) { return tt.copies, nil }
			// The root starts two children one after the other, each of which starts two: 7
			// runs. The second child's second child would be the seventh.
			id := startFam(t, r, "fam", "fam-total", famState{Kids: 2, Levels: 2})
			r.drive(t)
			if runs := familyRuns(t, r, "fam"); len(runs) != 6 {
				t.Fatalf("%d runs in the family, want 6", len(runs))
			}
			msg := outputString(t, assertStatus(t, r, id, engine.StatusFailed))
			want := "failed: orchestrator failed: cannot start child run of graph 'fam': its family (root run 'fam-total') has started 6 runs, the limit (MaxFamilyRuns)"
			if !strings.HasPrefix(msg, "orchestrator failed: child run '") || !strings.HasSuffix(msg, want) {
				t.Fatalf("root failure %q\nwant it to end with %q", msg, want)
			}
		})
	}
}

func TestEngine_ChildRun_PastTheDepthLimit_TakesTheNodesFailureRoute(t *testing.T) {
	t.Parallel()
	r, _ := newFamilyRig(t, engine.Options{MaxChildDepth: 2})
	id := startFam(t, r, "fam_routed", "deep", famState{Kids: 1, Levels: -1})
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	runs := familyRuns(t, r, "fam_routed")
	if len(runs) != 3 {
		t.Fatalf("%d runs in the family, want 3", len(runs))
	}
	var deepest engine.Run
	for _, rid := range runs {
		run := assertStatus(t, r, rid, engine.StatusCompleted)
		if strings.Count(rid, engine.ChildRunPrefix) == 2 {
			deepest = run
		}
	}
	want := "spawn|cannot start child run of graph 'fam_routed': it would be 3 levels below its family's root run 'deep', past the limit of 2 (MaxChildDepth)"
	if got := famOf(t, deepest).Seen; got != want {
		t.Fatalf("the deepest run's rescue saw %q\nwant %q", got, want)
	}
	rows := strings.Join(checkHistory(t, r.history(t, deepest.InstanceID)), " ")
	if want := "run_started:spawn node_completed:spawn node_failed:spawn node_completed:rescue route_resolved:rescue run_completed:rescue"; rows != want {
		t.Fatalf("history of the deepest run %s\nwant %s", rows, want)
	}
}

func TestEngine_Options_FamilyBounds(t *testing.T) {
	t.Parallel()
	r, _ := newFamilyRig(t, engine.Options{})
	if o := r.e.Options(); o.MaxChildDepth != engine.DefaultMaxChildDepth || o.MaxFamilyRuns != engine.DefaultMaxFamilyRuns {
		t.Fatalf("defaults %d, %d", o.MaxChildDepth, o.MaxFamilyRuns)
	}
	for _, o := range []engine.Options{{MaxChildDepth: -1}, {MaxFamilyRuns: -1}} {
		o.Registry, o.Store, o.Queue, o.Payloads = r.reg, r.store, r.queue, r.payloads
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "max child depth and max family runs must not be negative") {
			t.Fatalf("Validate(%d, %d) = %v", o.MaxChildDepth, o.MaxFamilyRuns, err)
		}
	}
}

// familyCount reads the count of its family's runs a run's head keeps.
func familyCount(t testing.TB, r *rig, id string) int64 {
	t.Helper()
	ent, err := r.store.Get(context.Background(), id, "r")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := ent.Properties["Family"].(int64)
	return n
}

// TestEngine_ChildRun_ChildCancelledMidChain_ItsParentCountsTheChainBelowIt: a child cancelled
// while its own child runs does not know of that one's start; the parent that goes on along
// its failure route counts it from the chain of waits below the child.
func TestEngine_ChildRun_ChildCancelledMidChain_ItsParentCountsTheChainBelowIt(t *testing.T) {
	t.Parallel()
	r, _ := newFamilyRig(t, engine.Options{})
	id := startFam(t, r, "fam_routed", "mid", famState{Kids: 1, Levels: 2, Hold: true})
	r.drive(t)
	kid := kidOf(t, r, id)
	grandKid := kidOf(t, r, kid)
	if got := []int64{familyCount(t, r, id), familyCount(t, r, kid), familyCount(t, r, grandKid)}; got[0] != 0 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("family counts of the chain %v, want [0 2 3]", got)
	}
	if err := r.e.CancelRun(t.Context(), kid, "enough"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, grandKid, engine.StatusTerminated)
	assertStatus(t, r, id, engine.StatusCompleted) // along its failure route
	if n := familyCount(t, r, id); n != 3 {
		t.Fatalf("the root counts %d runs of its family, want 3", n)
	}
}

func TestEngine_ChildRun_DeepFamily_CancelAndPurgeReachEveryRun(t *testing.T) {
	t.Parallel()
	const depth = 30
	r, _ := newFamilyRig(t, engine.Options{MaxChildDepth: depth})
	id := startFam(t, r, "fam", "deep-chain", famState{Kids: 1, Levels: depth, Hold: true})
	r.drive(t)
	runs := familyRuns(t, r, "fam")
	if len(runs) != depth+1 {
		t.Fatalf("%d runs in the chain, want %d", len(runs), depth+1)
	}
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	for _, rid := range runs {
		run := assertStatus(t, r, rid, engine.StatusTerminated)
		want := "stop"
		if rid != id {
			want = "parent run '" + run.ParentInstanceID + "' was cancelled: stop"
		}
		if got := outputString(t, run); got != want {
			t.Fatalf("run %s: reason %q, want %q", rid, got, want)
		}
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	for _, rid := range runs {
		if _, err := r.e.GetRun(t.Context(), rid); !errors.Is(err, engine.ErrRunNotFound) {
			t.Fatalf("run %s after the purge: %v", rid, err)
		}
		enginetest.CheckNoOrphanRows(t, r.store, r.e, rid)
	}
}

func TestEngine_ChildRun_WideFamily_PurgeOfTheRootPurgesEveryRun(t *testing.T) {
	t.Parallel()
	r, clk := newFamilyRig(t, engine.Options{})
	// 1 + 3 + 9 runs, all completed.
	id := startFam(t, r, "fam", "wide", famState{Kids: 3, Levels: 2})
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	runs := familyRuns(t, r, "fam")
	if len(runs) != 13 {
		t.Fatalf("%d runs in the family, want 13", len(runs))
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	sweepLater(t, r, clk)
	for _, rid := range runs {
		if _, err := r.e.GetRun(t.Context(), rid); !errors.Is(err, engine.ErrRunNotFound) {
			t.Fatalf("run %s after the purge: %v", rid, err)
		}
		enginetest.CheckNoOrphanRows(t, r.store, r.e, rid)
	}
}

func TestEngine_ChildRun_IDTakenByAnotherRun_CancelAndPurgeOfTheParentLeaveItAlone(t *testing.T) {
	t.Parallel()
	r, _ := newChildRig(t, engine.Options{RepairAfter: time.Minute})
	var taken, started atomic.Bool
	var foreign string
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		switch {
		case insertsHistory(engine.HistoryChildStarted)(ops) && taken.CompareAndSwap(false, true):
			// Just before the parent's commit, another run takes the child's id.
			for _, op := range ops {
				if op.Entity.Properties["Type"] == engine.HistoryChildStarted {
					var d struct {
						ID string `json:"child_instance_id"`
					}
					_ = json.Unmarshal([]byte(op.Entity.Properties["Data"].(string)), &d)
					foreign = d.ID
					if _, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "kid_wait", InstanceID: d.ID}); err != nil {
						return err
					}
					started.Store(true)
				}
			}
		case started.Load() && insertsHistory(engine.HistoryRunStarted)(ops) && ops[0].Entity.PartitionKey == foreign:
			return enginetest.ErrInjected // the child's own start fails: the parent waits for its recheck
		}
		return nil
	}
	id := startParent(t, r, "p-taken-cancel", "kid", "kid")
	r.drive(t)
	if p, ok := assertStatus(t, r, id, engine.StatusRunning).Progress(); !ok || p.WaitingForChild != foreign {
		t.Fatalf("parent waits for %q, want %q", p.WaitingForChild, foreign)
	}
	assertStatus(t, r, foreign, engine.StatusRunning)
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	r.drive(t) // the cancel's step for the child it waited for
	assertStatus(t, r, foreign, engine.StatusRunning)
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	assertStatus(t, r, foreign, engine.StatusRunning)
}

func TestEngine_ChildRun_PurgeOfAParentOfManyChildren_ReadsEveryPageOfItsLinks(t *testing.T) {
	t.Parallel()
	r, clk := newFamilyRig(t, engine.Options{})
	const kids = 101 // more than one page of link rows
	id := startFam(t, r, "fam", "many", famState{Kids: kids, Levels: 1})
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	runs := familyRuns(t, r, "fam")
	if len(runs) != kids+1 {
		t.Fatalf("%d runs in the family, want %d", len(runs), kids+1)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	sweepLater(t, r, clk)
	if left := familyRuns(t, r, "fam"); len(left) != 0 {
		t.Fatalf("%d runs left after the purge, e.g. %s", len(left), left[0])
	}
}
