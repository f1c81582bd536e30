package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// hostSim is the Functions host in front of a rig's engine, on the rig's fake clock: its
// queue listener reads the memory queue directly (the host reaches the queue even when the
// handler cannot reach storage), hands each visible message to HandleWorkItem, deletes it on
// success, makes it visible again after visibilityTimeout on failure, and moves it to the
// poison queue on its maxDequeueCount-th failure or when dequeued more often; the fg_repair
// timer runs the repair pass every repairPeriod.
type hostSim struct {
	r                           *rig
	clk                         *fakeClock
	visibility, poll, repairDue time.Duration
	repairPeriod                time.Duration
	maxDequeue                  int64
	elapsed                     time.Duration
	poisoned                    int
}

// step advances the clock by one polling interval and does what the host does in it.
func (h *hostSim) step() {
	ctx := context.Background()
	h.clk.advance(h.poll)
	h.elapsed += h.poll
	msgs, _ := h.r.queue.Receive(ctx, engine.MaxReceive, 10*time.Minute)
	for _, m := range msgs {
		if m.DequeueCount > h.maxDequeue {
			h.toPoison(m)
			continue
		}
		err := h.r.e.HandleWorkItem(ctx, m.Body, m.DequeueCount)
		switch {
		case err == nil:
			_ = h.r.queue.Delete(ctx, m)
		case m.DequeueCount >= h.maxDequeue:
			h.toPoison(m)
		default:
			_, _ = h.r.queue.Extend(ctx, m, h.visibility)
		}
	}
	if h.elapsed%h.repairPeriod == 0 {
		_, _ = h.r.e.Sweep(ctx)
	}
}

func (h *hostSim) toPoison(m engine.Message) {
	ctx := context.Background()
	_ = h.r.queue.PoisonQueue().Enqueue(ctx, m.Body, 0)
	_ = h.r.queue.Delete(ctx, m)
	h.poisoned++
}

// The bound, under the Functions host: the handler cannot reach storage for 90 s, three
// times the delivery budget (maxDequeueCount 5 × (visibilityTimeout 5 s + polling 1 s)), while
// runs are queued, mid-run, woken by an event, waiting on a timer that falls due, and
// started with their enqueue lost. Every run ends as it would without the outage (none
// failed as poison, with MaxStepStarts 2), within max(visibilityTimeout + M, RepairAfter) +
// repair period + M of the outage's end, M being the polling interval.
func TestEngine_OutageLongerThanDeliveryBudget_HostRescuesEveryRunWithinBound(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	const wait = 20 * time.Second
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute, MaxStepStarts: 2,
		Policies: map[string]engine.GraphPolicy{"support_agent": {WaitTimeout: wait, WaitTimeoutNode: "draft_reply"}}}, false)
	h := &hostSim{r: r, clk: clk, visibility: 5 * time.Second, poll: time.Second, repairDue: time.Minute,
		repairPeriod: 30 * time.Second, maxDequeue: 5}
	ctx := t.Context()
	const pipeline = `{"source_url":"https://example.com/data"}`

	timed := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	h.step() // timed waits; its wait-timeout timer is due in 20 s
	var lostOnce atomic.Bool
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		if lostOnce.CompareAndSwap(false, true) {
			return 0, enginetest.ErrInjected
		}
		return 1, nil
	}
	lost := r.start(t, "data_pipeline", "", pipeline) // its first item is lost: the due index has it
	midRun := r.start(t, "data_pipeline", "", pipeline)
	var hit atomic.Bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if ops[0].Entity.PartitionKey == midRun && commitsNode(ops, "transform") && hit.CompareAndSwap(false, true) {
			r.outage.Begin() // extract is committed, transform's commit fails: storage is gone
			return enginetest.ErrInjected
		}
		return nil
	}
	woken := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	queued := []string{r.start(t, "data_pipeline", "", pipeline), r.start(t, "data_pipeline", "", pipeline)}
	if err := r.e.RaiseEvent(ctx, woken, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
		t.Fatal(err)
	}
	h.step() // midRun goes first and takes storage down; the rest fail behind it
	if !hit.Load() {
		t.Fatal("the outage did not begin")
	}
	outageEnd := h.elapsed + 90*time.Second
	for h.elapsed < outageEnd {
		h.step()
	}
	r.outage.End()
	budget := time.Duration(h.maxDequeue) * (h.visibility + h.poll)
	bound := max(h.visibility+h.poll, h.repairDue) + h.repairPeriod + h.poll
	t.Logf("delivery budget %v, outage 90 s, bound %v", budget, bound)
	if h.poisoned < 4 {
		t.Errorf("%d messages reached the poison queue, want every stranded run's: the outage was not longer than the budget", h.poisoned)
	}

	ids := append([]string{timed, lost, midRun, woken}, queued...)
	done := map[string]time.Duration{}
	for h.elapsed < outageEnd+bound && len(done) < len(ids) {
		h.step()
		for _, id := range ids {
			if run, err := r.e.GetRun(ctx, id); err == nil && run.RuntimeStatus.Finished() {
				if _, ok := done[id]; !ok {
					done[id] = h.elapsed - outageEnd
				}
			}
		}
	}
	for _, id := range ids {
		run, _ := r.e.GetRun(ctx, id)
		took, ok := done[id]
		switch {
		case !ok:
			t.Errorf("run %s not finished %v after the outage (bound %v): %s %s", id, bound, bound, run.RuntimeStatus, run.CustomStatus)
		case run.RuntimeStatus != engine.StatusCompleted:
			t.Errorf("run %s: %s %s", id, run.RuntimeStatus, run.Output)
		default:
			t.Logf("run %s finished %v after the outage", id, took)
		}
	}
	for _, id := range append([]string{lost, midRun}, queued...) {
		assertPipelineDone(t, r, id)
	}
	if rows := strings.Join(checkHistory(t, r.history(t, timed)), " "); !strings.Contains(rows, engine.HistoryWaitTimedOut) {
		t.Errorf("the waiting run did not time out: %s", rows)
	}
	if n := poisonOf(t, r).Len(); n != 0 {
		t.Errorf("%d messages left in the poison queue", n)
	}
}
