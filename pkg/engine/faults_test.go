package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// commitsNode reports whether a batch is the commit of a visit of node.
func commitsNode(ops []engine.Op, node string) bool {
	for _, op := range ops {
		p := op.Entity.Properties
		if p["Type"] == engine.HistoryNodeCompleted && p["Node"] == node {
			return true
		}
	}
	return false
}

// once returns a hook that fails the first batch matching node with ErrInjected.
func once(node string) func([]engine.Op) error {
	var fired atomic.Bool
	return func(ops []engine.Op) error {
		if commitsNode(ops, node) && fired.CompareAndSwap(false, true) {
			return enginetest.ErrInjected
		}
		return nil
	}
}

// assertPipelineDone checks the final output and a history with each visit exactly once.
func assertPipelineDone(t *testing.T, r *rig, id string) {
	t.Helper()
	run, err := r.e.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusCompleted || string(run.Output) != pipelineFinal {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	got := strings.Join(checkHistory(t, r.history(t, id)), " ")
	want := "run_started:extract node_completed:extract route_resolved:extract node_completed:transform route_resolved:transform " +
		"node_completed:load route_resolved:load run_completed:load"
	if got != want {
		t.Fatalf("history = %s\nwant      %s", got, want)
	}
}

func TestEngine_CrashAfterActivityBeforeCommit_RedeliveryCompletesOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.fstore.BeforeSubmit = once("transform")
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.drive(t) // the item fails at the transform commit and stays in the queue (invisible)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("after the crash: %s", run.RuntimeStatus)
	}
	msgs, err := r.queue.Receive(t.Context(), 1, time.Minute)
	if len(msgs) != 0 || err != nil || r.queue.Len() != 1 {
		t.Fatalf("the failed item should be in flight: %d visible, %d queued", len(msgs), r.queue.Len())
	}
	// Redelivery after the visibility timeout: simulated by a second engine process that
	// handles the same message body.
	redelivered := string(encodeItem(t, r, id))
	if err := r.e.HandleWorkItem(t.Context(), []byte(redelivered), 2); err != nil {
		t.Fatal(err)
	}
	assertPipelineDone(t, r, id)
}

func TestEngine_CrashAfterCommitBeforeNextStep_RedeliveryCarriesCurrentStep(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	// Written, but the worker "dies" before going on: the commit's answer is an error and the
	// read that would resolve it fails too.
	var dead atomic.Bool
	commitOnce := once("transform")
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		err := commitOnce(ops)
		if err != nil {
			dead.Store(true)
		}
		return err
	}
	r.fstore.BeforeGet = func(string, string) error {
		if dead.CompareAndSwap(true, false) {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.drive(t) // the item's handling fails after the commit: the message stays in the queue
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("after the crash: %s", run.RuntimeStatus)
	}
	// A first delivery of a passed step is a duplicate and is dropped...
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 1); err != nil {
		t.Fatal(err)
	}
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("a duplicate moved the run: %s", run.RuntimeStatus)
	}
	// ...but the redelivery of the dead worker's item carries the run's current step.
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 2); err != nil {
		t.Fatal(err)
	}
	assertPipelineDone(t, r, id)
}

func TestEngine_LostEnqueue_SweepDispatchesFromDueIndex(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	var drop atomic.Bool
	drop.Store(true)
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if drop.Load() {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	if r.drive(t) != 0 {
		t.Fatal("an item was queued despite the failing queue")
	}
	drop.Store(false)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("sweep before the repair delay dispatched %d (err %v)", n, err)
	}
	clk.advance(2 * time.Minute)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("sweep dispatched %d (err %v)", n, err)
	}
	r.drive(t)
	assertPipelineDone(t, r, id)
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("a second sweep dispatched %d (err %v): the due row should be gone", n, err)
	}
}

func TestEngine_DuplicateDelivery_NoDuplicateHistory(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Concurrency: 4}, true)
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 3, nil }
	var ids []string
	for range 20 {
		ids = append(ids, r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`))
	}
	for _, id := range ids {
		r.wait(t, id)
		assertPipelineDone(t, r, id)
	}
	// A late duplicate of a finished run's item changes nothing.
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(ids[0], 1, 0), 1); err != nil {
		t.Fatal(err)
	}
	assertPipelineDone(t, r, ids[0])
}

func TestEngine_TwoWorkersOneRun_OneCommitWins(t *testing.T) {
	t.Parallel()
	var entered sync.WaitGroup
	entered.Add(2)
	var calls atomic.Int32
	barrier := func(_ context.Context, s counterState) (any, error) {
		if calls.Add(1) <= 2 {
			entered.Done()
			entered.Wait() // both workers are inside the first node
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	r := newRig(t, engine.Options{}, false, chainGraph(t, "raced", 3, barrier))
	id := r.start(t, "raced", "", `{}`)
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.e.HandleWorkItem(context.Background(), msgs[0].Body, 1)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("HandleWorkItem: %v", err)
		}
	}
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["n"] != 3.0 {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	got := strings.Join(checkHistory(t, r.history(t, id)), " ")
	want := "run_started:n0 node_completed:n0 route_resolved:n0 node_completed:n1 route_resolved:n1 node_completed:n2 route_resolved:n2 run_completed:n2"
	if got != want {
		t.Fatalf("history = %s", got)
	}
}

func TestEngine_TwoEnginesOneStore_AllRunsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Concurrency: 3}, true)
	other, err := engine.New(engine.Options{Registry: r.reg, Store: r.fstore, Queue: r.fqueue, Payloads: r.payloads,
		Concurrency: 3, PollInterval: time.Millisecond, Logger: r.e.Options().Logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 2, nil } // both engines get every item
	var ids []string
	for range 30 {
		ids = append(ids, r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`))
	}
	for _, id := range ids {
		r.wait(t, id)
		assertPipelineDone(t, r, id)
	}
}

func TestEngine_CancelDuringStep_DiscardsResult(t *testing.T) {
	t.Parallel()
	inside, release := make(chan struct{}), make(chan struct{})
	slow := func(_ context.Context, s counterState) (any, error) {
		close(inside)
		<-release
		return durable.Update{"n": 99}, nil
	}
	r := newRig(t, engine.Options{}, false, chainGraph(t, "slow", 1, slow))
	id := r.start(t, "slow", "", `{}`)
	done := make(chan struct{})
	go func() { defer close(done); r.drive(t) }()
	<-inside
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusTerminated || outputString(t, run) != "stop" {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	if got := strings.Join(checkHistory(t, r.history(t, id)), " "); got != "run_started:n0 run_terminated:n0" {
		t.Fatalf("history = %s: the in-flight step must not commit", got)
	}
}

func TestEngine_EventDuringStep_RebasesInsteadOfDropping(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	var raised atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if commitsNode(ops, "classify_request") && raised.CompareAndSwap(false, true) {
			// An event lands between the activity and its commit.
			if err := r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
				return err
			}
		}
		return nil
	}
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted || !strings.HasSuffix(stateOf(t, run)["final_response"].(string), "Reviewer: r.") {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	rows := checkHistory(t, r.history(t, id))
	if strings.Count(strings.Join(rows, " "), "node_completed:classify_request") != 1 {
		t.Fatalf("classify_request committed more than once: %v", rows)
	}
}

func TestEngine_MalformedWorkItems_Dropped(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	// Malformed messages are dropped (nil), not retried forever.
	for _, body := range []string{"", "{", "not base64!", `{"v":2,"run_id":"x","gen":1,"step":0}`} {
		if err := r.e.HandleWorkItem(t.Context(), []byte(body), 1); err != nil {
			t.Errorf("malformed %q: %v", body, err)
		}
	}
}

func encodeItemAt(id string, gen, step int64) []byte {
	b, _ := json.Marshal(map[string]any{"v": 1, "run_id": id, "gen": gen, "step": step})
	return b
}

// encodeItem returns the current work item of a run, base64-encoded as the Functions queue
// trigger would deliver it.
func encodeItem(t *testing.T, r *rig, id string) []byte {
	t.Helper()
	h := r.history(t, id)
	steps := 0
	for _, ev := range h {
		if ev.Type == engine.HistoryRouteResolved {
			steps++
		}
	}
	return []byte(base64Std(encodeItemAt(id, 1, int64(steps))))
}
