package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// fanState is the state of the fan-out test graphs.
type fanState struct {
	Items   []int          `json:"items"`
	Results []string       `json:"results"`
	Scores  map[string]int `json:"scores"`
	Total   int            `json:"total"`
	Note    string         `json:"note"`
}

// fanGraph builds name: plan maps work over items (one branch per item), the branches
// append "r<item>" to results and set scores["k<item>"] = item², and sum adds the scores up
// at the join. work, when given, replaces the branch handler.
func fanGraph(t testing.TB, name string, work durable.NodeFunc[fanState]) durable.GraphRegistration[fanState] {
	t.Helper()
	if work == nil {
		work = fanWork
	}
	b := durable.NewManifestBuilder[fanState](name)
	b.SetEntrypoint("plan")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddNode("plan", func(context.Context, fanState) (any, error) { return nil, nil }, durable.WithHandlerName("test.fan.plan"),
		durable.WithRoute(func(_ context.Context, s fanState) (any, error) { return durable.Map("sum", "work", s.Items), nil }),
		durable.WithRouteName("test.fan.route")))
	must(b.AddNode("work", work, durable.WithHandlerName("test.fan.work"), durable.WithNext("sum")))
	must(b.AddNode("sum", func(_ context.Context, s fanState) (any, error) {
		total := 0
		for _, v := range s.Scores {
			total += v
		}
		return durable.Update{"total": total}, nil
	}, durable.WithHandlerName("test.fan.sum"), durable.Terminal()))
	must(b.Reduce("results", durable.Append))
	must(b.Reduce("scores", durable.MergeKeys))
	must(b.AddEventHandler("noise", func(context.Context, fanState, json.RawMessage) (any, error) { return nil, nil }))
	g, err := b.Build()
	must(err)
	return g
}

func fanWork(ctx context.Context, s fanState) (any, error) {
	item, err := durable.BranchItem[int](ctx)
	if err != nil {
		return nil, err
	}
	scores := map[string]int{}
	for k, v := range s.Scores {
		scores[k] = v
	}
	scores[fmt.Sprintf("k%d", item)] = item * item
	return durable.Update{"results": append(slices.Clone(s.Results), fmt.Sprintf("r%d", item)), "scores": scores}, nil
}

// fanInput is the input of a fan-out of n items 0..n-1.
func fanInput(n int) string {
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return string(b)
}

// wantFan is the final state of a fan-out of n items.
func wantFan(n int) map[string]any {
	items, results, scores, total := []any{}, []any{}, map[string]any{}, 0
	for i := range n {
		items = append(items, float64(i))
		results = append(results, fmt.Sprintf("r%d", i))
		scores[fmt.Sprintf("k%d", i)] = float64(i * i)
		total += i * i
	}
	return map[string]any{"items": items, "results": results, "scores": scores, "total": float64(total), "note": ""}
}

// assertFanDone checks a completed fan-out of n items: the final state, and a history with
// the plan and sum visits once, each branch's completion once at its slot, one join.
func assertFanDone(t testing.TB, r *rig, id string, n int) {
	t.Helper()
	assertFanDoneOn(t, r.e, id, n)
}

// assertFanDoneOn is assertFanDone on any engine.
func assertFanDoneOn(t testing.TB, e *engine.Engine, id string, n int) {
	t.Helper()
	run, err := e.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	if got := stateOf(t, run); !reflect.DeepEqual(got, wantFan(n)) {
		t.Fatalf("final state %v\nwant        %v", got, wantFan(n))
	}
	counts := map[string]int{}
	var first int64
	last := int64(0)
	for _, ev := range historyOf(t, e, id) {
		if ev.Sequence <= last {
			t.Fatalf("history out of order at %d after %d", ev.Sequence, last)
		}
		last = ev.Sequence
		key := ev.Type + ":" + ev.Node
		switch ev.Type {
		case engine.HistoryBranchesStarted:
			var d struct{ FirstSeq, Count, Slots int64 }
			if err := json.Unmarshal(ev.Data, &struct {
				FirstSeq *int64 `json:"first_seq"`
				Count    *int64 `json:"count"`
				Slots    *int64 `json:"slots"`
			}{&d.FirstSeq, &d.Count, &d.Slots}); err != nil || d.Count != int64(n) {
				t.Fatalf("branches_started %s: %v", ev.Data, err)
			}
			first = d.FirstSeq
		case engine.HistoryBranchCompleted:
			var d struct {
				Index  int             `json:"index"`
				Item   int             `json:"item"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Index != d.Item || len(d.Result) == 0 {
				t.Fatalf("branch_completed %s: %v", ev.Data, err)
			}
			if want := first + int64(d.Index)*engine.BranchSlots; ev.Sequence != want {
				t.Fatalf("branch %d at sequence %d, want its slot %d", d.Index, ev.Sequence, want)
			}
			key = fmt.Sprintf("%s:%d", ev.Type, d.Index)
		}
		counts[key]++
	}
	for _, k := range []string{"node_completed:plan", "branches_started:plan", "branches_joined:sum", "node_completed:sum", "run_completed:sum"} {
		want := 1
		if n == 0 && k == "branches_joined:sum" {
			want = 0 // nothing to join: the run went on to the join node at once
		}
		if counts[k] != want {
			t.Fatalf("%s %d times: %v", k, counts[k], counts)
		}
	}
	for i := range n {
		if k := fmt.Sprintf("%s:%d", engine.HistoryBranchCompleted, i); counts[k] != 1 {
			t.Fatalf("branch %d completed %d times: %v", i, counts[k], counts)
		}
	}
}

// historyOf returns the whole history of run id.
func historyOf(t testing.TB, e *engine.Engine, id string) []engine.HistoryEvent {
	t.Helper()
	var out []engine.HistoryEvent
	tok := ""
	for {
		page, err := e.History(context.Background(), id, tok, 100)
		if err != nil {
			t.Fatalf("History(%s): %v", id, err)
		}
		out = append(out, page.Events...)
		if tok = page.ContinuationToken; tok == "" {
			return out
		}
	}
}

// driveOrder handles the queue by hand, picking the next of the visible messages with pick
// (given how many there are), until it is empty.
func (r *rig) driveOrder(t testing.TB, pick func(n int) int) {
	t.Helper()
	for range 10000 {
		msgs, err := r.queue.Receive(context.Background(), engine.MaxReceive, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		i := pick(len(msgs))
		// Put the others back: handled one at a time, in the chosen order.
		for j, m := range msgs {
			if j != i {
				if _, err := r.queue.Extend(context.Background(), m, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := r.e.HandleWorkItem(context.Background(), msgs[i].Body, msgs[i].DequeueCount); err == nil {
			if err := r.queue.Delete(context.Background(), msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("queue never drained")
}

func TestEngine_FanOut_JoinedStateIndependentOfFinishOrder(t *testing.T) {
	t.Parallel()
	for name, pick := range map[string]func(int) int{
		"in order": func(int) int { return 0 },
		"reversed": func(n int) int { return n - 1 },
		"middle":   func(n int) int { return n / 2 },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
			id := r.start(t, "fan", "", fanInput(10))
			r.driveOrder(t, pick)
			assertFanDone(t, r, id, 10)
		})
	}
}

func TestEngine_FanOut_EmbeddedDispatcher(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Concurrency: 8}, true, fanGraph(t, "fan", nil))
	var ids []string
	for i := range 5 {
		ids = append(ids, r.start(t, "fan", "", fanInput(10+i)))
	}
	for i, id := range ids {
		r.wait(t, id)
		assertFanDone(t, r, id, 10+i)
	}
}

func TestEngine_FanOut_EmptyMapContinuesAtJoin(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	id := r.start(t, "fan", "", `{"items":[]}`)
	r.drive(t)
	assertFanDone(t, r, id, 0)
}

func TestEngine_FanOut_WidthLimit(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	id := r.start(t, "fan", "", fanInput(durable.MaxBranches+1))
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	want := fmt.Sprintf("resolve_route failed: parallel fan-out of %d branches is above the limit of %d", durable.MaxBranches+1, durable.MaxBranches)
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want {
		t.Fatalf("status %s output %s, want %q", run.RuntimeStatus, run.Output, want)
	}
	wide := r.start(t, "fan", "wide", fanInput(durable.MaxBranches))
	r.drive(t)
	assertFanDone(t, r, wide, durable.MaxBranches)
}

func TestEngine_FanOut_SameFieldWithoutReducer_FailsRun(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[fanState]("clash")
	b.SetEntrypoint("start")
	note := func(v string) durable.NodeFunc[fanState] {
		return func(context.Context, fanState) (any, error) { return durable.Update{"note": v}, nil }
	}
	for _, err := range []error{
		b.AddNode("start", note(""), durable.WithHandlerName("clash.start"),
			durable.WithRoute(func(context.Context, fanState) (any, error) { return durable.Parallel("end", "a", "b", "c"), nil }),
			durable.WithRouteName("clash.route")),
		b.AddNode("a", note("a"), durable.WithHandlerName("clash.a")),
		b.AddNode("b", func(context.Context, fanState) (any, error) { return durable.Update{"total": 1}, nil }, durable.WithHandlerName("clash.b")),
		b.AddNode("c", note("c"), durable.WithHandlerName("clash.c")),
		b.AddNode("end", note("end"), durable.WithHandlerName("clash.end"), durable.Terminal()),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "clash", "", `{}`)
	r.driveOrder(t, func(n int) int { return n - 1 })
	run, _ := r.e.GetRun(t.Context(), id)
	want := "orchestrator failed: join at 'end': branches 0 and 2 both update field 'note', which has no reducer (declare one with ManifestBuilder.Reduce)"
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want {
		t.Fatalf("status %s output %s\nwant %q", run.RuntimeStatus, run.Output, want)
	}
}

func TestEngine_FanOut_FailedBranchFailsRun(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		calls.Add(1)
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			return nil, errors.New("boom")
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(4))
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	want := "execute_node failed: branch 1 of 4 (node 'work'): boom"
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != want {
		t.Fatalf("status %s output %s, want %q", run.RuntimeStatus, run.Output, want)
	}
	var failed int
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryBranchFailed {
			failed++
			if !strings.Contains(string(ev.Data), `"error":"boom"`) || !strings.Contains(string(ev.Data), `"item":1`) {
				t.Errorf("branch_failed %s", ev.Data)
			}
		}
		if ev.Type == engine.HistoryBranchesJoined {
			t.Errorf("a failed fan-out joined: %s", ev.Data)
		}
	}
	if failed != 1 {
		t.Fatalf("%d branch_failed rows", failed)
	}
}

func TestEngine_FanOut_BranchRetriesUnderPolicy(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var fails atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{
		"fan": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
	}}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 2 && fails.Add(1) <= 2 {
			return nil, errors.New("flaky")
		}
		return fanWork(ctx, s)
	}))
	id := r.start(t, "fan", "", fanInput(4))
	for range 5 {
		r.drive(t)
		clk.advance(10 * time.Second)
	}
	assertFanDone(t, r, id, 4)
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryBranchCompleted && strings.Contains(string(ev.Data), `"index":2,`) &&
			!strings.Contains(string(ev.Data), `"attempt":3`) {
			t.Fatalf("branch 2 completed on another attempt than its third: %s", ev.Data)
		}
	}
}

// TestEngine_FanOut_StorageOpsPerBranch measures what one more branch costs: the same
// fan-out with n and 2n items, the difference divided by n. A branch reads two rows: the
// run's head and its own progress row (not found, for a branch that nothing held or retried).
func TestEngine_FanOut_StorageOpsPerBranch(t *testing.T) {
	t.Parallel()
	const n = 10
	var headBatches atomic.Int64
	measure := func(items int) (submits, gets, queries, enqueues, receives int64) {
		r := newRigETags(t, true, engine.Options{}, false, fanGraph(t, "fan", nil))
		id := r.start(t, "fan", "", fanInput(items))
		r.counts.Reset()
		headBatches.Store(0)
		r.fstore.BeforeSubmit = func(ops []engine.Op) error {
			if ops[0].Entity.RowKey == "r" {
				headBatches.Add(1)
			}
			return nil
		}
		r.drive(t)
		c := r.counts
		submits, gets, queries, enqueues, receives = c.Submits.Load(), c.Gets.Load(), c.Queries.Load(), c.Enqueues.Load(), c.Received.Load()
		assertFanDone(t, r, id, items)
		return submits, gets, queries, enqueues, receives
	}
	s1, g1, q1, e1, r1 := measure(n)
	s2, g2, q2, e2, r2 := measure(2 * n)
	per := func(a, b int64) float64 { return float64(b-a) / n }
	t.Logf("per branch: %.1f batches, %.1f reads, %.1f queries, %.1f enqueues, %.1f receives; fan-out of %d: %d batches, %d reads, %d queries, %d enqueues",
		per(s1, s2), per(g1, g2), per(q1, q2), per(e1, e2), per(r1, r2), n, s1, g1, q1, e1)
	// A branch's completion check is one query when branches finish in index order; the
	// check that finds every branch settled reads windows that double, one more for a fan-out
	// twice as wide.
	if per(s1, s2) != 1 || per(g1, g2) != 2 || q2-q1 != n+1 || per(e1, e2) != 1 || per(r1, r2) != 1 {
		t.Fatalf("a branch costs %.1f batches, %.1f reads, %.1f queries, %.1f enqueues, %.1f messages; want 2 reads, 1 of each other (and 1 query more for the last check)",
			per(s1, s2), per(g1, g2), per(q1, q2), per(e1, e2), per(r1, r2))
	}
	// The head is written four times whatever the width: the first visit (Running), the
	// fan-out, the join (one batch) and the sum visit that completes the run.
	if headBatches.Load() != 4 {
		t.Fatalf("%d head batches for a fan-out of %d, want 4", headBatches.Load(), 2*n)
	}
}
