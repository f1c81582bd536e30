package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// outage is a model endpoint that is down while it is set; calls counts each node's calls.
type outage struct {
	down  atomic.Bool
	mu    sync.Mutex
	calls map[string]int
}

func newOutage() *outage { return &outage{calls: map[string]int{}} }

// call counts a call of node and fails it, for good, while the endpoint is down.
func (o *outage) call(node string) error {
	o.mu.Lock()
	o.calls[node]++
	o.mu.Unlock()
	if o.down.Load() {
		return durable.NonRetryable(errors.New("model endpoint unavailable (503)"))
	}
	return nil
}

func (o *outage) count(node string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[node]
}

// outageChain builds name: n0 → n1 → n2 (terminal), each adding 1 to n; n1 calls the model
// (o). With failRoute, n1's route calls it instead of its node.
func outageChain(t testing.TB, name string, o *outage, failRoute bool) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("n0")
	node := func(label string, model bool) durable.NodeFunc[counterState] {
		return func(_ context.Context, s counterState) (any, error) {
			if model && !failRoute {
				if err := o.call(label); err != nil {
					return nil, err
				}
			} else {
				_ = o.call(label) // counted, never down
			}
			return durable.Update{"n": s.N + 1}, nil
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddNode("n0", node("n0", false), durable.WithHandlerName("test.rw."+name+".n0"), durable.WithNext("n1")))
	opts := []durable.NodeOption{durable.WithHandlerName("test.rw." + name + ".n1")}
	if failRoute {
		opts = append(opts, durable.WithRouteName("test.rw."+name+".route"), durable.WithRoute(func(context.Context, counterState) (any, error) {
			if err := o.call("route"); err != nil {
				return nil, err
			}
			return "n2", nil
		}))
	} else {
		opts = append(opts, durable.WithNext("n2"))
	}
	must(b.AddNode("n1", node("n1", true), opts...))
	must(b.AddNode("n2", node("n2", false), durable.WithHandlerName("test.rw."+name+".n2"), durable.Terminal()))
	g, err := b.Build()
	must(err)
	return g
}

func assertRunStatus(t testing.TB, r *rig, id string, want engine.RunStatus) engine.Run {
	t.Helper()
	run, err := r.e.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != want {
		t.Fatalf("run %s is %s (output %s), want %s", id, run.RuntimeStatus, run.Output, want)
	}
	return run
}

// TestEngine_RewindRun_NodeFailure: a run whose node failed in an outage is rewound and
// completes; only the failed node runs again, its history keeps the failure and records the
// rewind, and its handlers see the failed step's idempotency key.
func TestEngine_RewindRun_NodeFailure(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, outageChain(t, "rw_node", o, false))
	o.down.Store(true)
	id := r.start(t, "rw_node", "rw-node-1", `{"n":0}`)
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusFailed)
	o.down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, "model is back"); err != nil {
		t.Fatal(err)
	}
	assertRunStatus(t, r, id, engine.StatusRunning)
	r.drive(t)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	if st := stateOf(t, run); st["n"] != 3.0 {
		t.Fatalf("state %v, want n 3", st)
	}
	if got := [3]int{o.count("n0"), o.count("n1"), o.count("n2")}; got != [3]int{1, 2, 1} {
		t.Fatalf("handler calls n0 n1 n2 = %v, want [1 2 1]", got)
	}
	rows := rowTypes(r.history(t, id))
	want := "run_started:n0 node_completed:n0 route_resolved:n0 run_failed:n1 run_rewound:n1 node_completed:n1 route_resolved:n1 " +
		"node_completed:n2 route_resolved:n2 run_completed:n2"
	if rows != want {
		t.Fatalf("history\n got %s\nwant %s", rows, want)
	}
	for _, ev := range r.history(t, id) {
		if ev.Type != engine.HistoryRunRewound {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d["reason"] != "model is back" || d["failed_step"] != 2.0 || d["failed_name"] != engine.ExecuteNodeName || d["node"] != "n1" ||
			!strings.Contains(fmt.Sprint(d["error"]), "model endpoint unavailable") {
			t.Fatalf("run_rewound data %v", d)
		}
	}
	// Completed now: a second rewind is refused, naming the status.
	err := r.e.RewindRun(context.Background(), id, "")
	var nf *engine.RunNotFailedError
	if !errors.As(err, &nf) || nf.Status != engine.StatusCompleted ||
		err.Error() != "run 'rw-node-1' is Completed; only a Failed run can be rewound" {
		t.Fatalf("rewind of a completed run: %v", err)
	}
}

// TestEngine_RewindRun_SameIdempotencyKey: the rewound step is the failed step again: its
// handlers see the same step, so the same idempotency key, from attempt 1.
func TestEngine_RewindRun_SameIdempotencyKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	var attempts []int
	down := atomic.Bool{}
	down.Store(true)
	b := durable.NewManifestBuilder[counterState]("rw_key")
	b.SetEntrypoint("n0")
	if err := b.AddNode("n0", func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		mu.Lock()
		keys, attempts = append(keys, info.IdempotencyKey()), append(attempts, info.Attempt)
		mu.Unlock()
		if down.Load() {
			return nil, durable.NonRetryable(errors.New("down"))
		}
		return nil, nil
	}, durable.WithHandlerName("test.rw.key.n0"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "rw_key", "rw-key-1", `{}`)
	r.drive(t)
	down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusCompleted)
	if len(keys) != 2 || keys[0] != keys[1] || attempts[1] != 1 {
		t.Fatalf("keys %v attempts %v: want the same key twice, the rewound one at attempt 1", keys, attempts)
	}
}

// TestEngine_RewindRun_RouteFailure: a route that failed after its node completed is resolved
// again on the committed state; the node does not run again.
func TestEngine_RewindRun_RouteFailure(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, outageChain(t, "rw_route", o, true))
	o.down.Store(true)
	id := r.start(t, "rw_route", "rw-route-1", `{"n":0}`)
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusFailed)
	o.down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	if st := stateOf(t, run); st["n"] != 3.0 {
		t.Fatalf("state %v, want n 3", st)
	}
	if got := [4]int{o.count("n0"), o.count("n1"), o.count("route"), o.count("n2")}; got != [4]int{1, 1, 2, 1} {
		t.Fatalf("calls n0 n1 route n2 = %v, want [1 1 2 1]", got)
	}
	rows := rowTypes(r.history(t, id))
	want := "run_started:n0 node_completed:n0 route_resolved:n0 node_completed:n1 run_failed:n1 run_rewound:n1 route_resolved:n1 " +
		"node_completed:n2 route_resolved:n2 run_completed:n2"
	if rows != want {
		t.Fatalf("history\n got %s\nwant %s", rows, want)
	}
}

// TestEngine_RewindRun_FanOut: a fan-out whose branch failed is rewound: only the failed
// branches run again, the completed ones are carried, and the join merges all of them.
func TestEngine_RewindRun_FanOut(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := map[int]int{}
	var down atomic.Bool
	down.Store(true)
	work := func(ctx context.Context, s fanState) (any, error) {
		item, err := durable.BranchItem[int](ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		calls[item]++
		mu.Unlock()
		if item%2 == 1 && down.Load() {
			return nil, durable.NonRetryable(errors.New("model endpoint unavailable"))
		}
		return fanWork(ctx, s)
	}
	r := newRig(t, engine.Options{}, false, fanGraph(t, "rw_fan", work))
	id := r.start(t, "rw_fan", "rw-fan-1", fanInput(5))
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusFailed)
	down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, "after the outage"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	st := stateOf(t, run)
	if st["total"] != 30.0 { // 0+1+4+9+16
		t.Fatalf("state %v, want total 30", st)
	}
	mu.Lock()
	defer mu.Unlock()
	for item := range 5 {
		want := 1
		if item%2 == 1 {
			want = 2
		}
		if calls[item] != want {
			t.Fatalf("branch %d ran %d times, want %d (calls %v)", item, calls[item], want, calls)
		}
	}
}

// TestEngine_RewindRun_ChildFailure: a parent failed by its child's failure is rewound
// alone: the child is rewound first, completes, and the parent resumes after it.
func TestEngine_RewindRun_ChildFailure(t *testing.T) {
	t.Parallel()
	o := newOutage()
	kid := outageChain(t, "rw_kid", o, false)
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, parentGraph(t, "rw_parent"), kid)
	o.down.Store(true)
	in, _ := json.Marshal(parentState{N: 1, Child: "rw_kid", Into: "kid"})
	id := r.start(t, "rw_parent", "rw-parent-1", string(in))
	r.drive(t)
	child := kidOf(t, r, id)
	assertRunStatus(t, r, child, engine.StatusFailed)
	assertRunStatus(t, r, id, engine.StatusFailed)
	o.down.Store(false)
	if err := r.e.RewindRun(context.Background(), id, "kid's model is back"); err != nil {
		t.Fatal(err)
	}
	for range 5 { // the parent's rechecks are timers on the fake clock
		r.drive(t)
		clk.advance(time.Hour)
	}
	r.drive(t)
	assertRunStatus(t, r, child, engine.StatusCompleted)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	if got, _ := json.Marshal(stateOf(t, run)["kid"]); string(got) != `{"limit":0,"n":5,"pad":""}` {
		t.Fatalf("parent's kid %s", got)
	}
	if got := [3]int{o.count("n0"), o.count("n1"), o.count("n2")}; got != [3]int{1, 2, 1} {
		t.Fatalf("child's calls n0 n1 n2 = %v, want [1 2 1]", got)
	}
	if !strings.Contains(rowTypes(r.history(t, child)), "run_failed:n1 run_rewound:n1") {
		t.Fatalf("child history %s", rowTypes(r.history(t, child)))
	}
}

// TestEngine_RewindRun_NotFound: an unknown run, or an id no run can have.
func TestEngine_RewindRun_NotFound(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for _, id := range []string{"nope", "", "a/b"} {
		if err := r.e.RewindRun(context.Background(), id, ""); !errors.Is(err, engine.ErrRunNotFound) {
			t.Fatalf("RewindRun(%q) = %v, want ErrRunNotFound", id, err)
		}
	}
}

// TestEngine_RewindRun_Concurrent: rewinds of one failed run at once rewind it once; the
// others are told it is Running (seeded interleavings).
func TestEngine_RewindRun_Concurrent(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rnd := rand.New(rand.NewPCG(seed, 43))
			o := newOutage()
			r := newRig(t, engine.Options{}, false, outageChain(t, "rw_conc", o, false))
			o.down.Store(true)
			id := r.start(t, "rw_conc", "rw-conc", `{"n":0}`)
			r.drive(t)
			o.down.Store(false)
			n := 2 + rnd.IntN(6)
			yields := make([]int, n)
			for i := range yields {
				yields[i] = rnd.IntN(50)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			gate := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-gate
					for range yields[i] {
						runtimeGosched()
					}
					errs[i] = r.e.RewindRun(context.Background(), id, fmt.Sprint("rewind ", i))
				})
			}
			close(gate)
			wg.Wait()
			ok := 0
			for _, err := range errs {
				var nf *engine.RunNotFailedError
				switch {
				case err == nil:
					ok++
				case errors.As(err, &nf) && nf.Status == engine.StatusRunning:
				default:
					t.Fatalf("rewind: %v", err)
				}
			}
			if ok != 1 {
				t.Fatalf("%d of %d rewinds succeeded, want 1", ok, n)
			}
			if c := strings.Count(rowTypes(r.history(t, id)), "run_rewound"); c != 1 {
				t.Fatalf("%d run_rewound rows, want 1", c)
			}
			r.drive(t)
			assertRunStatus(t, r, id, engine.StatusCompleted)
			if c := o.count("n1"); c != 2 {
				t.Fatalf("n1 ran %d times, want 2", c)
			}
		})
	}
}

// TestEngine_RewindRun_LostReply: a rewind whose reply is lost after it landed is settled by
// reading its row: it succeeded, once.
func TestEngine_RewindRun_LostReply(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, outageChain(t, "rw_lost", o, false))
	o.down.Store(true)
	id := r.start(t, "rw_lost", "rw-lost", `{"n":0}`)
	r.drive(t)
	o.down.Store(false)
	var lost atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		for _, op := range ops {
			if op.Entity.Properties["Type"] == engine.HistoryRunRewound && !lost.Swap(true) {
				return errors.New("timeout: reply lost")
			}
		}
		return nil
	}
	if err := r.e.RewindRun(context.Background(), id, ""); err != nil {
		t.Fatalf("rewind with a lost reply: %v", err)
	}
	if !lost.Load() {
		t.Fatal("the rewind's batch was never seen")
	}
	r.fstore.AfterSubmit = nil
	if c := strings.Count(rowTypes(r.history(t, id)), "run_rewound"); c != 1 {
		t.Fatalf("%d run_rewound rows, want 1", c)
	}
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusCompleted)
}

func runtimeGosched() { runtime.Gosched() }

// TestEngine_RewindRun_ReplacedMeanwhile: a rewind whose run is replaced by a new start of its
// id between its read and its write writes nothing: its merge is conditioned on the head it
// read, and the new run goes on as its own.
func TestEngine_RewindRun_ReplacedMeanwhile(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, outageChain(t, "rw_repl", o, false))
	o.down.Store(true)
	id := r.start(t, "rw_repl", "rw-repl", `{"n":0}`)
	r.drive(t)
	o.down.Store(false)
	var replaced atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		for _, op := range ops {
			if op.Entity.Properties["Type"] == engine.HistoryRunRewound && !replaced.Swap(true) {
				r.start(t, "rw_repl", id, `{"n":10}`) // a new run of the id, started in between
			}
		}
		return nil
	}
	err := r.e.RewindRun(context.Background(), id, "")
	var nf *engine.RunNotFailedError
	if !replaced.Load() || !errors.As(err, &nf) {
		t.Fatalf("rewind of a run replaced meanwhile: %v (replaced %v)", err, replaced.Load())
	}
	r.fstore.BeforeSubmit = nil
	r.drive(t)
	run := assertRunStatus(t, r, id, engine.StatusCompleted)
	if st := stateOf(t, run); st["n"] != 13.0 {
		t.Fatalf("the new run's state %v, want n 13", st)
	}
	if rows := rowTypes(r.history(t, id)); strings.Contains(rows, "run_rewound") || strings.Contains(rows, "run_failed") {
		t.Fatalf("the new run's history %s", rows)
	}
}

// TestEngine_RewindRun_ProcessDiesAfterWrite: a rewind whose process dies after its write,
// before it puts the run's work on the queue, is carried on by the item it enqueued before the
// write, visible after RepairAfter.
func TestEngine_RewindRun_ProcessDiesAfterWrite(t *testing.T) {
	t.Parallel()
	o := newOutage()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false, outageChain(t, "rw_dies", o, false))
	o.down.Store(true)
	id := r.start(t, "rw_dies", "rw-dies", `{"n":0}`)
	r.drive(t)
	o.down.Store(false)
	var enqueues atomic.Int64
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if enqueues.Add(1) == 2 {
			return 0, nil // the rewind's own dispatch, after its write: lost with its process
		}
		return 1, nil
	}
	if err := r.e.RewindRun(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	r.fqueue.OnEnqueue = nil
	if n := enqueues.Load(); n != 2 {
		t.Fatalf("the rewind enqueued %d items, want 2 (its backup, then its work)", n)
	}
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusRunning) // nothing on the queue is visible yet
	clk.advance(time.Minute)
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusCompleted)
	if c := o.count("n1"); c != 2 {
		t.Fatalf("n1 ran %d times, want 2", c)
	}
}

// TestEngine_RewindRun_LegacyJoinRefused: a fan-out's failure recorded without the region (as
// the engine wrote it before rewind) is refused, and the run left as it was.
func TestEngine_RewindRun_LegacyJoinRefused(t *testing.T) {
	t.Parallel()
	fail := func(ctx context.Context, s fanState) (any, error) {
		return nil, durable.NonRetryable(errors.New("model endpoint unavailable"))
	}
	r := newRig(t, engine.Options{}, false, fanGraph(t, "rw_legacy", fail))
	id := r.start(t, "rw_legacy", "rw-legacy", fanInput(2))
	r.drive(t)
	assertRunStatus(t, r, id, engine.StatusFailed)
	h := r.history(t, id)
	last := h[len(h)-1]
	var d map[string]any
	if err := json.Unmarshal(last.Data, &d); err != nil || last.Type != engine.HistoryRunFailed || d["rewind"] == nil {
		t.Fatalf("last row %s %s", last.Type, last.Data)
	}
	ent, err := r.store.Get(context.Background(), id, fmt.Sprintf("h%06d-%016d", 1, last.Sequence))
	if err != nil {
		t.Fatal(err)
	}
	ent.Properties["Data"] = fmt.Sprintf(`{"error": %q}`, d["error"])
	if _, err := r.store.Submit(context.Background(), []engine.Op{{Kind: engine.OpReplace, IfMatch: engine.ETagAny, Entity: ent}}); err != nil {
		t.Fatal(err)
	}
	err = r.e.RewindRun(context.Background(), id, "")
	var unsup *engine.RewindUnsupportedError
	if !errors.As(err, &unsup) || !strings.Contains(err.Error(), "cannot be rewound") {
		t.Fatalf("rewind of a legacy join failure: %v", err)
	}
	assertRunStatus(t, r, id, engine.StatusFailed)
}
