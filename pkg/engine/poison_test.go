package engine_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// poisonOf returns the rig's poison queue (the memory twin's).
func poisonOf(t testing.TB, r *rig) *memory.Queue {
	t.Helper()
	pq, ok := r.queue.PoisonQueue().(*memory.Queue)
	if !ok {
		t.Fatal("the memory queue has no poison queue")
	}
	return pq
}

// toPoison moves every visible message of the rig's work queue to its poison queue, as the
// host does at maxDequeueCount, and returns how many it moved.
func toPoison(t testing.TB, r *rig) int {
	t.Helper()
	ctx := context.Background()
	msgs, err := r.queue.Receive(ctx, engine.MaxReceive, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := poisonOf(t, r).Enqueue(ctx, m.Body, 0); err != nil {
			t.Fatal(err)
		}
		if err := r.queue.Delete(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return len(msgs)
}

// The repair pass settles each poison message by its run's head: a run that still needs its
// item gets a fresh one for its current step (also when the poisoned item's step has passed,
// committed in-process before the handling failed), a run over the kill limit fails, and
// stale, waiting, purged and malformed items are dropped. The poison queue is left empty.
func TestEngine_RepairPass_SettlesPoisonQueue(t *testing.T) {
	t.Parallel()
	var die atomic.Bool
	var entered atomic.Int32
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, dyingGraph(t, &die, &entered))
	ctx := t.Context()

	finished := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	waiting := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	purged := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.drive(t)
	if err := r.e.PurgeRun(ctx, purged); err != nil {
		t.Fatal(err)
	}
	needed := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	if toPoison(t, r) != 1 {
		t.Fatal("the needed run's first item was not queued")
	}
	// A handling that committed extract in-process, then failed at transform and ran out of
	// deliveries: its item names step 0, the head is at step 1.
	movedOn := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.fstore.BeforeSubmit = once("transform")
	r.drive(t)
	r.fstore.BeforeSubmit = nil
	killed := r.start(t, "dying", "", `{}`)
	die.Store(true)
	if toPoison(t, r) != 1 {
		t.Fatal("the dying run's first item was not queued")
	}
	killStep(t, r, clk, killed, 5)
	pq := poisonOf(t, r)
	for _, id := range []string{finished, waiting, purged, movedOn, killed} {
		if err := pq.Enqueue(ctx, encodeItemAt(id, 1, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pq.Enqueue(ctx, []byte("not a work item"), 0); err != nil {
		t.Fatal(err)
	}
	if n, err := r.e.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("repair dispatched %d runs (err %v), want the needed and the moved-on run", n, err)
	}
	if n := pq.Len(); n != 0 {
		t.Errorf("%d messages left in the poison queue", n)
	}
	die.Store(false)
	r.drive(t)
	for _, id := range []string{needed, movedOn} {
		assertPipelineDone(t, r, id)
	}
	if run, _ := r.e.GetRun(ctx, killed); run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != killedFiveTimes {
		t.Errorf("killed run: %s %s, want Failed: %s", run.RuntimeStatus, run.Output, killedFiveTimes)
	}
	if run, _ := r.e.GetRun(ctx, waiting); run.RuntimeStatus != engine.StatusRunning || !strings.Contains(string(run.CustomStatus), `"waiting_for_event":"approval"`) {
		t.Errorf("waiting run: %s %s, want still waiting", run.RuntimeStatus, run.CustomStatus)
	}
}

// One repair pass settles at most 128 poison messages; the rest wait for the next pass.
func TestEngine_RepairPass_PoisonBatchBounded(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	pq := poisonOf(t, r)
	for range 200 {
		if err := pq.Enqueue(t.Context(), encodeItemAt("gone", 1, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int{72, 0} {
		if _, err := r.e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := pq.Len(); n != want {
			t.Errorf("after a pass %d poison messages are left, want %d", n, want)
		}
	}
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// The embedded dispatcher moves a message delivered more than MaxDequeueCount (2) times to
// the memory queue's poison queue, the repair pass puts it back while its step is under the
// kill limit, and a step that kills its worker every time fails its run after MaxStepStarts
// (5) starts: the delivery budget and the kill limit are independent.
func TestEngine_EmbeddedDispatcher_PoisonMovedRescuedThenKillLimit(t *testing.T) {
	// Not parallel: its busy workers would starve the renewals of timing tests running beside it.
	var die atomic.Bool
	var entered atomic.Int32
	die.Store(true)
	logs := &syncBuffer{}
	r := newRig(t, engine.Options{VisibilityTimeout: 100 * time.Millisecond, MaxDequeueCount: 2, SweepInterval: 50 * time.Millisecond,
		Concurrency: 8, Logger: testLoggerTo(logs)}, true, dyingGraph(t, &die, &entered))
	id := r.start(t, "dying", "", `{}`)
	run := r.waitFor(t, id, nil)
	if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != killedFiveTimes {
		t.Fatalf("status %s output %s, want Failed: %s", run.RuntimeStatus, run.Output, killedFiveTimes)
	}
	if n := entered.Load(); n != 5 {
		t.Errorf("the node started %d times, want 5", n)
	}
	moved, rescued := logs.count("work item moved to the poison queue"), logs.count("repair put a poisoned work item back")
	if moved < 2 || rescued < 2 {
		t.Errorf("%d moves to the poison queue and %d rescues, want at least 2 of each", moved, rescued)
	}
}

// testLoggerTo logs at Info and above to w.
func testLoggerTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// Storage errors under the embedded dispatcher: the store and the queue's enqueues fail for
// longer than the delivery budget (MaxDequeueCount × VisibilityTimeout), so failed handlings
// cannot even be re-enqueued and their messages go to the poison queue; once storage is back,
// every run completes within the bound, none failed as poison.
func TestEngine_EmbeddedDispatcher_OutageLongerThanBudget_RunsComplete(t *testing.T) {
	// Not parallel: its busy workers would starve the renewals of timing tests running beside it.
	const (
		visibility = 150 * time.Millisecond
		sweep      = 150 * time.Millisecond
		repair     = 150 * time.Millisecond
		poll       = 5 * time.Millisecond
	)
	logs := &syncBuffer{}
	r := newRig(t, engine.Options{VisibilityTimeout: visibility, MaxDequeueCount: 2, SweepInterval: sweep, RepairAfter: repair,
		PollInterval: poll, MaxStepStarts: 2, Concurrency: 4, Logger: testLoggerTo(logs)}, false)
	r.outage.Affects = func(op string) bool { return !strings.HasPrefix(op, "queue.") || op == enginetest.OpQueueEnqueue }
	var hit atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitsNode(ops, "transform") && hit.CompareAndSwap(false, true) {
			r.outage.Begin() // mid-run: extract committed, transform's commit fails
			return enginetest.ErrInjected
		}
		return nil
	}
	var ids []string
	for range 6 {
		ids = append(ids, r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`))
	}
	if err := r.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !hit.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(6 * visibility) // longer than the budget: 2 deliveries × visibility
	r.outage.End()
	ended := time.Now()
	for _, id := range ids {
		run := r.waitFor(t, id, nil)
		if run.RuntimeStatus != engine.StatusCompleted {
			t.Errorf("run %s: %s %s", id, run.RuntimeStatus, run.Output)
		}
	}
	// Liveness bound of the embedded engine: max(VisibilityTimeout + PollInterval,
	// RepairAfter) + SweepInterval + PollInterval, plus the steps themselves and scheduling
	// slack on a shared machine.
	bound := max(visibility+poll, repair) + sweep + poll
	if took := time.Since(ended); took > bound+2*time.Second {
		t.Errorf("the runs took %v after the outage, bound %v", took, bound)
	}
	if logs.count("work item moved to the poison queue") == 0 {
		t.Error("no work item reached the poison queue: the outage was not longer than the delivery budget")
	}
	for _, id := range ids {
		assertPipelineDone(t, r, id)
	}
}

// releasesHold picks the merge that releases a step's hold: the head's Holder cleared, with
// no write id (a commit clears it too, stamped with its write id).
func releasesHold(ops []engine.Op) bool {
	if len(ops) != 1 || ops[0].Kind != engine.OpMerge || ops[0].Entity.RowKey != "r" {
		return false
	}
	p := ops[0].Entity.Properties
	_, stamped := p["WriteID"]
	return p["Holder"] == "" && !stamped
}

// Issue #32, storage errors alone never fail a run as poison: every delivery of a step
// begins (its hold is stored), runs the node, then meets a storage error at its commit —
// nine deliveries, well past MaxStepStarts (5) — and the tenth completes the run. A failed
// handling releases its hold; when the release fails too, the hold is spared by the engine
// that knows it, however late its item comes back, and by any other engine while its lease
// runs (here the item is back after host.json's 30 s, within the lease of a minute).
func TestEngine_CommitAndReleaseFail_NeverPoison(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		engines      int
		gap          time.Duration // between a failed delivery and the next
		releaseFails bool
	}{
		{"one engine, release fails, items back past the lease", 1, 2 * engine.DefaultVisibilityTimeout, true},
		{"two engines, release fails, items back within the lease", 2, 30 * time.Second, true},
		{"two engines, release works, items back past the lease", 2, 2 * engine.DefaultVisibilityTimeout, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var die atomic.Bool
			var entered atomic.Int32
			r := newRig(t, engine.Options{Clock: clk.now}, false, dyingGraph(t, &die, &entered))
			if lease := r.e.Options().StepLease; (tc.gap < lease) != (tc.engines == 2 && tc.releaseFails) {
				t.Fatalf("gap %v against a lease of %v tests nothing", tc.gap, lease)
			}
			engines := []*engine.Engine{r.e}
			if tc.engines == 2 {
				engines = append(engines, r.deploy(t, clk.now, dyingGraph(t, &die, &entered)).e)
			}
			var faulty atomic.Bool
			var released atomic.Int32
			faulty.Store(true)
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				if !faulty.Load() {
					return nil
				}
				if releasesHold(ops) {
					released.Add(1)
					if tc.releaseFails {
						return enginetest.ErrInjected
					}
				}
				if commitsNode(ops, "n0") {
					return enginetest.ErrInjected
				}
				return nil
			}
			id := r.start(t, "dying", "", `{}`)
			item := encodeItemAt(id, 1, 0)
			const failed = 9
			for count := int64(1); count <= failed; count++ {
				if err := engines[int(count)%len(engines)].HandleWorkItem(t.Context(), item, count); err == nil {
					t.Fatalf("delivery %d succeeded despite the faults", count)
				}
				clk.advance(tc.gap)
			}
			if released.Load() == 0 {
				t.Fatal("no release was tried: the scenario tests nothing")
			}
			faulty.Store(false)
			if err := engines[0].HandleWorkItem(t.Context(), item, failed+1); err != nil {
				t.Fatal(err)
			}
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s output %s: failed handlings were counted as deaths", run.RuntimeStatus, run.Output)
			}
			if n := entered.Load(); n != failed+1 {
				t.Errorf("the node ran %d times, want %d: every delivery must have reached its commit", n, failed+1)
			}
		})
	}
}

// Issue #32: with half of every run's writes failing (each refused before it reaches the
// table), 200 runs handled by two engines under the Functions host's delivery rules (a
// failed item back after 5 s, the poison queue after 5 deliveries, the repair pass every
// 30 s) all complete, each visit committed once: none fails as poison (2 did when a restart
// was counted on every redelivery and taken back only when the take-back could be written).
// Seeded.
func TestEngine_HalfTheWritesFail_NoRunFailsAsPoison(t *testing.T) {
	t.Parallel()
	const runs = 200
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	engines := []*engine.Engine{r.e, r.deploy(t, clk.now, mustExamples(t)...).e}
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = r.start(t, "data_pipeline", "", pipelineInput)
	}
	rng := rand.New(rand.NewPCG(32, 0x5eed))
	var faulty atomic.Bool
	faulty.Store(true)
	failed := 0
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		pk := ops[0].Entity.PartitionKey
		if faulty.Load() && !strings.HasPrefix(pk, "~") && !strings.HasPrefix(pk, "§") && rng.IntN(2) == 0 {
			failed++ // a run's write, not the index's or the due index's
			return enginetest.ErrInjected
		}
		return nil
	}
	const (
		visibility = 5 * time.Second
		maxDequeue = 5
	)
	ctx := t.Context()
	pq := poisonOf(t, r)
	finished := func() bool {
		for _, id := range ids {
			if run, err := r.e.GetRun(ctx, id); err != nil || !run.RuntimeStatus.Finished() {
				return false
			}
		}
		return true
	}
	for step := 1; ; step++ {
		if step > 20000 {
			t.Fatal("the runs did not finish")
		}
		clk.advance(time.Second)
		msgs, err := r.queue.Receive(ctx, engine.MaxReceive, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			if m.DequeueCount > maxDequeue {
				_ = pq.Enqueue(ctx, m.Body, 0)
				_ = r.queue.Delete(ctx, m)
				continue
			}
			switch err := engines[(step+i)%2].HandleWorkItem(ctx, m.Body, m.DequeueCount); {
			case err == nil:
				_ = r.queue.Delete(ctx, m)
			case m.DequeueCount >= maxDequeue:
				_ = pq.Enqueue(ctx, m.Body, 0)
				_ = r.queue.Delete(ctx, m)
			default:
				_, _ = r.queue.Extend(ctx, m, visibility)
			}
		}
		if step%30 == 0 {
			_, _ = engines[step/30%2].Sweep(ctx)
			if finished() {
				break
			}
		}
	}
	faulty.Store(false)
	t.Logf("%d writes failed", failed)
	failedRuns := 0
	for _, id := range ids {
		if run, _ := r.e.GetRun(ctx, id); run.RuntimeStatus != engine.StatusCompleted {
			failedRuns++
			t.Errorf("run %s: %s %s", id, run.RuntimeStatus, run.Output)
			continue
		}
		assertPipelineDone(t, r, id)
	}
	if failedRuns > 0 {
		t.Fatalf("%d of %d runs failed", failedRuns, runs)
	}
}

// mustExamples returns the example graphs.
func mustExamples(t testing.TB) []durable.Graph {
	t.Helper()
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	return gs
}
