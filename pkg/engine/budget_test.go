package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// refusingPayloads refuses, as a full store does, every payload that holds marker.
type refusingPayloads struct {
	engine.PayloadStore
	marker string
}

func (p refusingPayloads) Put(ctx context.Context, key string, data []byte) error {
	if strings.Contains(string(data), p.marker) {
		return fmt.Errorf("put %s: %w", key, engine.ErrStorageFull)
	}
	return p.PayloadStore.Put(ctx, key, data)
}

// A branch result the payload store refuses for want of room fails the branch, as a refused
// batch does: the run fails naming the limit, and the branch's work item is settled instead
// of coming back for ever.
func TestEngine_FanOut_SpillRefusedForRoom_FailsTheBranch(t *testing.T) {
	t.Parallel()
	const marker = "refuse-me"
	reg := durable.NewRegistry()
	if err := reg.Register(fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			return durable.Update{"note": marker + strings.Repeat("x", 64<<10)}, nil
		}
		return fanWork(ctx, s)
	})); err != nil {
		t.Fatal(err)
	}
	q := memory.NewQueue()
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: q,
		Payloads: refusingPayloads{PayloadStore: memory.NewPayloadStore(), marker: marker}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	run, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "fan", Input: json.RawMessage(fanInput(3))})
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for range 1000 {
		msgs, err := q.Receive(t.Context(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		if err := e.HandleWorkItem(t.Context(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
			failures++
			t.Logf("work item failed: %v", err)
			continue // left invisible: a redelivery would fail alike
		}
		if err := q.Delete(t.Context(), msgs[0]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.GetRun(t.Context(), run.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if failures > 0 || got.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(got.Output), "branch result cannot be stored") {
		t.Fatalf("%d failed work items; run %s output %s, want the run failed by its branch, naming the refusal", failures, got.RuntimeStatus, got.Output)
	}
}

// newBudgetFamilyRig is a budget rig (retention_owner_test.go) over the example graphs and
// the family graphs ("fam", "fam_routed", child_family_test.go), with opts' family bounds.
func newBudgetFamilyRig(t *testing.T, limits membudget.Limits, retention engine.Retention, opts engine.Options) *budgetRig {
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
	for _, g := range append(gs, famGraph(t, "fam", false), famGraph(t, "fam_routed", true)) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	r := &budgetRig{b: b, queue: memory.NewQueue(), budget: limits}
	opts.Registry, opts.Store, opts.Queue = reg, memory.NewStore(memory.WithBudget(b)), r.queue
	opts.Payloads, opts.Logger, opts.Retention = memory.NewPayloadStore(memory.WithBudget(b)), testLogger(t), retention
	if r.e, err = engine.New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.e.Close() })
	return r
}

// startOwned starts run id for owner as the runs API does under per-user isolation: the
// caller's request, its metadata naming the owner.
func (r *budgetRig) startOwned(owner, graph, id, input string) error {
	meta, _ := json.Marshal(map[string]string{engine.MetadataOwnerKey: owner})
	_, err := r.e.StartRun(membudget.NewWork(context.Background(), owner),
		engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: json.RawMessage(input), Metadata: meta})
	return err
}

// fillFor starts runs of support_agent (each waits for an approval) for owner until the budget
// refuses one, with messages of falling sizes, so that little room is left; it returns the
// ids of those still running.
func (r *budgetRig) fillFor(t *testing.T, owner string) []string {
	t.Helper()
	var ids []string
	for _, size := range []int{16 << 10, 2 << 10, 256} {
		for i := 0; ; i++ {
			if i == 10000 {
				t.Fatal("10 000 runs and no refusal")
			}
			id := fmt.Sprintf("%s-%d-%d", owner, size, i)
			err := r.startOwned(owner, "support_agent", id, `{"user_message":"refund `+strings.Repeat("y", size)+`"}`)
			if errors.Is(err, engine.ErrStorageFull) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		r.drive(t)
	}
	var active []string // a step past the room left fails its run
	for _, id := range ids {
		if run, err := r.e.GetRun(t.Context(), id); err != nil {
			t.Fatal(err)
		} else if !run.RuntimeStatus.Finished() {
			active = append(active, id)
		}
	}
	return active
}

// With the budget full, a cancel by the run's owner and by the master key (no identity)
// succeed, and so do purges and retention's: a cancel the budget refuses is written again as
// making room, its reason cut short.
func TestEngine_Budget_Full_CancelAndPurgeAlwaysWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		perOwner  int64
		canceller string // the cancel's caller: the owner, or "" for the master key
	}{
		{"owner, total full", 0, "eve"},
		{"master key, total full", 0, ""},
		{"owner, own share full", 256 << 10, "eve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newBudgetRig(t, membudget.Limits{Total: 1 << 20, PerIdentity: tt.perOwner}, engine.Retention{MaxRuns: 8, PerPass: 10000})
			ids := r.fillFor(t, "eve")
			if len(ids) < 2 {
				t.Fatalf("only %d runs started", len(ids))
			}
			reason := strings.Repeat("stop ", 1<<10) // 5 KiB: more than the room left
			ctx := membudget.NewWork(context.Background(), tt.canceller)
			for _, id := range ids[:2] {
				if err := r.e.CancelRun(ctx, id, reason); err != nil {
					t.Fatalf("cancel %s with the budget full: %v", id, err)
				}
				run, err := r.e.GetRun(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if run.RuntimeStatus != engine.StatusTerminated || !strings.HasPrefix(string(run.Output), `"stop stop`) || len(run.Output) > 300 {
					t.Fatalf("run %s is %s with output %.80s… (%d bytes), want terminated with its reason cut short", id, run.RuntimeStatus, run.Output, len(run.Output))
				}
			}
			if used, total := r.b.Used(), r.b.Limits().Total; used > total+8<<10 {
				t.Fatalf("%d bytes accounted after the cancels, far past the total of %d", used, total)
			}
			if err := r.e.PurgeRun(ctx, ids[0]); err != nil {
				t.Fatalf("purge with the budget full: %v", err)
			}
			for _, id := range ids[2:] {
				if err := r.e.CancelRun(ctx, id, "done"); err != nil {
					t.Fatalf("cancel %s: %v", id, err)
				}
			}
			if _, err := r.e.Sweep(t.Context()); err != nil {
				t.Fatalf("retention's sweep with the budget full: %v", err)
			}
			if page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Limit: 1000}); err != nil {
				t.Fatal(err)
			} else if len(page.Runs) > 8 {
				t.Fatalf("%d runs kept after retention's sweep, want at most 8 (one a shard)", len(page.Runs))
			}
			if err := r.startOwned("eve", "data_pipeline", "eve-after", `{"source_url":"s"}`); err != nil {
				t.Fatalf("a start after the purges: %v", err)
			}
		})
	}
}

// What a run makes the store hold counts against its owner's share, its index and due rows
// and its partition included: an owner's runs leave to the total only the index's shared
// partitions, and a purge gives the owner back every byte.
func TestEngine_Budget_IndexAndDueRows_CountAgainstTheRunsOwner(t *testing.T) {
	t.Parallel()
	r := newBudgetFamilyRig(t, membudget.Limits{Total: 64 << 20, PerIdentity: 32 << 20}, engine.Retention{}, engine.Options{})
	const runs = 100
	for i := range runs {
		if err := r.startOwned("eve", "data_pipeline", fmt.Sprint("eve-", i), `{"source_url":"s"}`); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.startOwned("eve", "fam", "eve-fam", `{"kids":3,"levels":1}`); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	shared := r.b.Used() - r.b.UsedBy("eve")
	if shared > 16<<10 { // some 40 index and due partitions
		t.Fatalf("%d of %d bytes count against the total only; want only the index's shared partitions", shared, r.b.Used())
	}
	for i := range runs {
		if err := r.e.PurgeRun(t.Context(), fmt.Sprint("eve-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.e.PurgeRun(t.Context(), "eve-fam"); err != nil {
		t.Fatal(err)
	}
	if used := r.b.UsedBy("eve"); used != 0 {
		t.Fatalf("eve still holds %d bytes once her runs are purged", used)
	}
}

// One start of a graph that starts children without end cannot fill the budget: the family's
// runs count against the root owner's share as new work, so the family stops within it and
// another identity still starts runs.
func TestEngine_Budget_SelfDelegatingFamily_StaysWithinItsOwnersShare(t *testing.T) {
	t.Parallel()
	const share = 512 << 10
	r := newBudgetFamilyRig(t, membudget.Limits{Total: 4 << 20, PerIdentity: share}, engine.Retention{},
		engine.Options{MaxFamilyRuns: 1 << 20})
	if err := r.startOwned("eve", "fam", "eve-root", `{"kids":1000000,"levels":1}`); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run, err := r.e.GetRun(t.Context(), "eve-root")
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(run.Output), "the run store is full (its memory budget)") {
		t.Fatalf("root %s with output %.300s; want failed, its child refused by the budget", run.RuntimeStatus, run.Output)
	}
	if eve, all := r.b.UsedBy("eve"), r.b.Used(); eve > share || all-eve > 16<<10 {
		t.Fatalf("eve's family holds %d bytes of her %d, %d more count against the total only", eve, share, all-eve)
	}
	if err := r.startOwned("alice", "data_pipeline", "alice-1", `{"source_url":"s"}`); err != nil {
		t.Fatalf("alice refused after eve's family: %v", err)
	}
	if err := r.e.PurgeRun(t.Context(), "eve-root"); err != nil {
		t.Fatalf("purge of the family: %v", err)
	}
	if used := r.b.UsedBy("eve"); used != 0 {
		t.Fatalf("eve holds %d bytes once her family is purged", used)
	}
}

// Retention counts a child run as its root owner's: one owner's many families never make it
// purge another owner's child.
func TestEngine_Retention_ChildRuns_CountAsTheirRootOwners(t *testing.T) {
	t.Parallel()
	r := newBudgetFamilyRig(t, membudget.Limits{Total: 1 << 30, PerIdentity: 1 << 28}, engine.Retention{MaxRuns: 80, PerPass: 10000}, engine.Options{})
	if err := r.startOwned("bob", "fam", "bob-root", `{"kids":1,"levels":1}`); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	children, err := r.e.GetRun(t.Context(), "bob-root")
	if err != nil || len(children.ChildInstanceIDs) != 1 {
		t.Fatalf("bob's root: %v, children %v", err, children.ChildInstanceIDs)
	}
	for i := range 150 {
		if err := r.startOwned("alice", "fam", fmt.Sprint("alice-", i), `{"kids":1,"levels":1}`); err != nil {
			t.Fatal(err)
		}
	}
	r.drive(t)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !r.exists(t, "bob-root") || !r.exists(t, children.ChildInstanceIDs[0]) {
		t.Fatal("bob's run or its child purged by alice's families")
	}
}

// TestEngine_Budget_TotalFull_RunsFailInsteadOfRetrying: once the runs already started have
// used the last eighth too, a step's or a branch's result the store refuses is replaced by
// its failure, which is written however full the store is: every work item settles (none
// fails to be retried for as long as the store stays full) and every run finishes, past the
// total by no more than the failures' few hundred bytes each.
func TestEngine_Budget_TotalFull_RunsFailInsteadOfRetrying(t *testing.T) {
	t.Parallel()
	const total = 4 << 20
	r := newBudgetRig(t, membudget.Limits{Total: total}, engine.Retention{})
	q := `{"question":"` + strings.Repeat("q", 4<<10) + `","sources":[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("s", 250)+`",`, 16), ",") + `]}`
	n := 0
	for ; n < 10000; n++ {
		if err := r.start("", "research_agent", fmt.Sprint("r-", n), q); err != nil {
			break
		}
	}
	// settled reports whether every run finished or waits for its approval.
	settled := func() (finished int, ok bool) {
		for i := range n {
			run, err := r.e.GetRun(context.Background(), fmt.Sprint("r-", i))
			if err != nil {
				t.Fatal(err)
			}
			_, waiting := run.WaitingFor()
			switch {
			case run.RuntimeStatus == engine.StatusCompleted || run.RuntimeStatus == engine.StatusFailed:
				finished++
			case run.RuntimeStatus != engine.StatusRunning || !waiting:
				return 0, false
			}
		}
		return finished, true
	}
	failures, deliveries := 0, 0
	// The deadline only stops a test that would never settle: runs fit the budget by their
	// bytes, and history rows that record updates fit more of them, each a fan-out of 16.
	deadline := time.Now().Add(120 * time.Second)
	for deliveries < 20000 && time.Now().Before(deadline) {
		msgs, err := r.queue.Receive(context.Background(), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 { // drained, or what is left is a back-off's delayed item
			if _, ok := settled(); ok {
				break
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		deliveries++
		if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
			failures++
			continue // redelivered at once (no visibility timeout here)
		}
		_ = r.queue.Delete(context.Background(), msgs[0])
	}
	finished, ok := settled()
	if failures > 0 || !ok {
		t.Fatalf("%d runs: %d of %d deliveries failed, every run settled: %v; want every work item settled", n, failures, deliveries, ok)
	}
	// A research run fans out over its 16 sources: at most a failure row per branch, and the
	// run's, past the total.
	if over := r.b.Used() - total; over > int64(n)*17*512 {
		t.Fatalf("%d bytes past the total for %d runs, more than 17 failures of 512 bytes each", over, n)
	}
	t.Logf("%d runs started, %d finished, %d deliveries; %d bytes used of %d", n, finished, deliveries, r.b.Used(), total)
}
