package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// budgetRig is an engine over the in-memory twins sharing one byte budget, driven by hand.
type budgetRig struct {
	e      *engine.Engine
	b      *membudget.Budget
	queue  *memory.Queue
	budget membudget.Limits
}

func newBudgetRig(t *testing.T, limits membudget.Limits, retention engine.Retention) *budgetRig {
	t.Helper()
	return newBudgetRigClock(t, limits, retention, nil)
}

// newBudgetRigClock is newBudgetRig on clock (nil: time.Now), shared by the engine and the
// stores.
func newBudgetRigClock(t *testing.T, limits membudget.Limits, retention engine.Retention, clock func() time.Time) *budgetRig {
	t.Helper()
	b, err := membudget.New(limits)
	if err != nil {
		t.Fatal(err)
	}
	reg := durable.NewRegistry()
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	r := &budgetRig{b: b, queue: memory.NewQueue(memory.WithClock(clock)), budget: limits}
	r.e, err = engine.New(engine.Options{Registry: reg, Store: memory.NewStore(memory.WithBudget(b), memory.WithClock(clock)), Queue: r.queue,
		Payloads: memory.NewPayloadStore(memory.WithBudget(b)), Logger: testLogger(t), Retention: retention, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.e.Close() })
	return r
}

// start starts a run for owner as a caller's request does.
func (r *budgetRig) start(owner, graph, id, input string) error {
	_, err := r.e.StartRun(membudget.NewWork(context.Background(), owner),
		engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: json.RawMessage(input)})
	return err
}

// drive handles the queued work items as the dispatcher does (no caller in the context).
func (r *budgetRig) drive(t *testing.T) {
	t.Helper()
	for range 100000 {
		msgs, err := r.queue.Receive(context.Background(), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
			t.Fatalf("handle work item: %v", err)
		}
		if err := r.queue.Delete(context.Background(), msgs[0]); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("queue never drained")
}

func (r *budgetRig) exists(t *testing.T, id string) bool {
	t.Helper()
	_, err := r.e.GetRun(t.Context(), id)
	if err != nil && !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// One owner's many finished runs never make retention purge another owner's: each keeps its
// own newest MaxRuns.
func TestEngine_Retention_PerOwner_OneOwnersLoadKeepsAnothersRuns(t *testing.T) {
	t.Parallel()
	r := newBudgetRig(t, membudget.Limits{Total: 1 << 30, PerIdentity: 1 << 28}, engine.Retention{MaxRuns: 80, PerPass: 10000})
	for i := range 3 {
		if err := r.start("alice", "data_pipeline", fmt.Sprintf("alice-%d", i), pipelineInput); err != nil {
			t.Fatal(err)
		}
	}
	r.drive(t)
	const eveRuns = 300
	for i := range eveRuns {
		if err := r.start("eve", "data_pipeline", fmt.Sprintf("eve-%d", i), pipelineInput); err != nil {
			t.Fatal(err)
		}
	}
	r.drive(t)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if !r.exists(t, fmt.Sprintf("alice-%d", i)) {
			t.Fatalf("alice-%d purged by eve's load", i)
		}
	}
	kept := 0
	for i := range eveRuns {
		if r.exists(t, fmt.Sprintf("eve-%d", i)) {
			kept++
		}
	}
	// MaxRuns/8 per shard: about 80 kept, never more.
	if kept > 80 || kept < 60 {
		t.Fatalf("eve keeps %d runs of %d; want about 80 kept, the rest purged", kept, eveRuns)
	}
	if !r.exists(t, fmt.Sprintf("eve-%d", eveRuns-1)) {
		t.Fatal("eve's newest run purged")
	}
}

// An owner whose runs crowd its share loses its own oldest finished runs, down to three
// quarters of it; another owner's runs and the crowded owner's unfinished runs stay.
func TestEngine_Retention_Crowded_PurgesOnlyThatOwnersOldestFinished(t *testing.T) {
	t.Parallel()
	const share = 8 << 20
	r := newBudgetRig(t, membudget.Limits{Total: 64 << 20, PerIdentity: share}, engine.Retention{MaxRuns: 1000, PerPass: 10000})
	big := `{"source_url":"` + strings.Repeat("x", 100<<10) + `"}`
	for i := range 3 {
		if err := r.start("alice", "data_pipeline", fmt.Sprintf("alice-%d", i), big); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.start("eve", "support_agent", "eve-waiting", `{"user_message":"refund `+strings.Repeat("y", 100<<10)+`"}`); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	n := 0
	for ; ; n++ {
		if n == 1000 {
			t.Fatal("1 000 runs and no refusal")
		}
		if err := r.start("eve", "data_pipeline", fmt.Sprintf("eve-%d", n), big); err != nil {
			if !errors.Is(err, engine.ErrStorageFull) {
				t.Fatal(err)
			}
			break
		}
		r.drive(t)
	}
	if !r.b.Crowded("eve") {
		t.Fatalf("eve holds %d of %d bytes after %d runs and a refusal: not crowded", r.b.UsedBy("eve"), share, n)
	}
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r.b.Crowded("eve") {
		t.Fatalf("eve still holds %d of %d bytes after a sweep", r.b.UsedBy("eve"), share)
	}
	if !r.exists(t, "eve-waiting") || !r.exists(t, fmt.Sprintf("eve-%d", n-1)) || r.exists(t, "eve-0") {
		t.Fatal("want eve's waiting run and newest run kept, her oldest purged")
	}
	for i := range 3 {
		if !r.exists(t, fmt.Sprintf("alice-%d", i)) {
			t.Fatalf("alice-%d purged for eve's load", i)
		}
	}
	if err := r.start("eve", "data_pipeline", "eve-again", big); err != nil {
		t.Fatalf("eve refused after the sweep made room: %v", err)
	}
}

// A run whose step would pass the budget fails with the reason recorded (the budget's last
// eighth holds it), and the accounted bytes never pass the total.
func TestEngine_Budget_StepPastTheBudget_FailsTheRun(t *testing.T) {
	t.Parallel()
	const total = 2 << 20
	r := newBudgetRig(t, membudget.Limits{Total: total}, engine.Retention{})
	// A start holds its input about three times (head state, input, history); its step
	// copies the state again in history and head.
	input := `{"source_url":"` + strings.Repeat("x", 250<<10) + `"}`
	var ids []string
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("1 000 runs and no refusal")
		}
		id := fmt.Sprintf("run-%d", i)
		if err := r.start("", "data_pipeline", id, input); err != nil {
			if !errors.Is(err, engine.ErrStorageFull) {
				t.Fatal(err)
			}
			break
		}
		ids = append(ids, id)
	}
	r.drive(t)
	if used := r.b.Used(); used > total {
		t.Fatalf("%d bytes accounted, past the total of %d", used, total)
	}
	failed := 0
	for _, id := range ids {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch run.RuntimeStatus {
		case engine.StatusFailed:
			failed++
			if !strings.Contains(string(run.Output), "memory budget") {
				t.Fatalf("run %s failed with %s, want the memory budget named", id, run.Output)
			}
		case engine.StatusCompleted:
		default:
			t.Fatalf("run %s is %s, want finished", id, run.RuntimeStatus)
		}
	}
	if failed == 0 {
		t.Fatalf("none of %d runs failed, want the budget to stop some steps", len(ids))
	}
}

// A start refused because its run does not fit its identity's share leaves nothing behind:
// not its due row nor its index rows, which count against the total only and were written
// before the head.
func TestEngine_Budget_RefusedStart_LeavesNothing(t *testing.T) {
	t.Parallel()
	r := newBudgetRig(t, membudget.Limits{Total: 64 << 20, PerIdentity: 1 << 20}, engine.Retention{})
	big := `{"user_message":"refund ` + strings.Repeat("y", 60<<10) + `"}`
	n := 0
	for ; n < 1000; n++ {
		if err := r.start("eve", "support_agent", fmt.Sprint("eve-", n), big); err != nil {
			break
		}
	}
	r.drive(t)
	used := r.b.Used()
	for i := range 5 {
		err := r.start("eve", "data_pipeline", fmt.Sprint("eve-small-", i), `{"source_url":"s"}`)
		if !errors.Is(err, engine.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
			t.Fatalf("a start past eve's share after %d runs: %v, want ErrStorageFull", n, err)
		}
	}
	if got := r.b.Used(); got != used {
		t.Fatalf("refused starts left %d bytes behind", got-used)
	}
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != n {
		t.Fatalf("%d runs listed, want the %d admitted", len(page.Runs), n)
	}
}
