package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// famState is the state of the family graphs: a run starts kids children one after the
// other, each of graph child with grand_kids children of its own.
type famState struct {
	N         int    `json:"n"`          // children started and finished so far
	Kids      int    `json:"kids"`       // children to start
	Child     string `json:"child"`      // their graph ("" for the run's own)
	GrandKids int    `json:"grand_kids"` // the kids each child starts
	Seen      string `json:"seen"`       // the failure the rescue node saw: "<node>|<error>"
}

// famGraph builds name: "spawn" starts a child of s.Child (name when empty) with
// {"kids": s.GrandKids, "grand_kids": s.GrandKids} while n < kids, resuming at "spawned",
// which adds 1 to n and goes back to "spawn"; once n reaches kids the run completes. With
// routed, spawn's failure route is "rescue", which records the failure it sees and completes.
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
		if s.N >= s.Kids {
			return "__complete__", nil
		}
		child := s.Child
		if child == "" {
			child = name
		}
		return durable.StartChild(child, famState{Kids: s.GrandKids, GrandKids: s.GrandKids}, "spawned"), nil
	}
	opts := []durable.NodeOption{durable.WithHandlerName("test." + name + ".spawn"), durable.WithRoute(route), durable.WithRouteName("test." + name + ".route")}
	if routed {
		opts = append(opts, durable.WithFailureRoute("rescue"))
	}
	must(b.AddNode("spawn", func(context.Context, famState) (any, error) { return nil, nil }, opts...))
	must(b.AddNode("spawned", func(_ context.Context, s famState) (any, error) { return durable.Update{"n": s.N + 1}, nil },
		durable.WithHandlerName("test."+name+".spawned"), durable.WithNext("spawn")))
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
			id := startFam(t, r, "fam_routed", "fr-"+tt.name, famState{Kids: 1, Child: tt.child})
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
