package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Fan-outs under faults: lost replies, commits that land unseen, duplicate deliveries, lost
// enqueues and branch items that run out of deliveries.

// commitsBranch reports whether a batch is a branch's commit.
func commitsBranch(ops []engine.Op) bool {
	for _, op := range ops {
		if t := op.Entity.Properties["Type"]; t == engine.HistoryBranchCompleted || t == engine.HistoryBranchFailed {
			return true
		}
	}
	return false
}

func TestEngine_FanOut_LostRepliesOfBranchCommits(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	// Every branch's commit lands and its reply is lost: the SDK's retry meets its own row.
	r.fstore.LoseReply = commitsBranch
	id := r.start(t, "fan", "", fanInput(6))
	r.drive(t)
	assertFanDone(t, r, id, 6)
}

func TestEngine_FanOut_BranchCommitFailsAfterLanding(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	var n atomic.Int32
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		if commitsBranch(ops) && n.Add(1)%2 == 1 {
			return enginetest.ErrInjected // stored, but the worker never learns
		}
		return nil
	}
	id := r.start(t, "fan", "", fanInput(6))
	r.drive(t)
	assertFanDone(t, r, id, 6)
}

func TestEngine_FanOut_DuplicateDeliveries(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		calls.Add(1)
		return fanWork(ctx, s)
	}))
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 2, nil }
	id := r.start(t, "fan", "", fanInput(6))
	r.drive(t)
	assertFanDone(t, r, id, 6)
	if calls.Load() < 6 {
		t.Fatalf("%d branch calls", calls.Load())
	}
}

func TestEngine_FanOut_FailingBranchEnqueue_RedeliveryPutsThemBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	var n atomic.Int32
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		if strings.Contains(string(body), `"br":3`) && n.Add(1) == 1 {
			return 0, enginetest.ErrInjected // the 4th branch's enqueue fails: the fan-out's handling fails
		}
		return 1, nil
	}
	id := r.start(t, "fan", "", fanInput(6))
	r.drive(t) // the fan-out item stays in flight (its handling failed)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("after the failed enqueue: %s", run.RuntimeStatus)
	}
	// Its redelivery meets the fan-out committed and puts back the branches not done.
	if err := r.e.HandleWorkItem(t.Context(), encodeItemAt(id, 1, 1), 2); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 6)
}

func TestEngine_FanOut_LostJoinEnqueue_BranchRedeliveryEnqueuesIt(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	var failed atomic.Bool
	var lastBranch []byte
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		if !strings.Contains(string(body), `"br"`) && strings.Contains(string(body), `"step":1,`) && failed.CompareAndSwap(false, true) {
			return 0, enginetest.ErrInjected // the join's enqueue fails
		}
		if strings.Contains(string(body), `"br":2`) {
			lastBranch = body
		}
		return 1, nil
	}
	id := r.start(t, "fan", "", fanInput(3))
	r.drive(t)
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning || !failed.Load() {
		t.Fatalf("after the lost join: %s", run.RuntimeStatus)
	}
	// The last branch's item comes back: its branch is committed, so it only enqueues the join.
	if err := r.e.HandleWorkItem(t.Context(), lastBranch, 2); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertFanDone(t, r, id, 3)
}

func TestEngine_FanOut_PoisonedBranch_RescuedWhileNoStartDied(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", nil))
	id := r.start(t, "fan", "", fanInput(2))
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	if err := r.e.HandleWorkItem(t.Context(), msgs[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), msgs[0])
	branches, _ := r.queue.Receive(t.Context(), 2, time.Minute)
	if len(branches) != 2 {
		t.Fatalf("%d branch items", len(branches))
	}
	// Branch 1's item runs out of deliveries three times (storage was down each time: no
	// start of it died): the repair pass puts it back every time, marked as sent again.
	poison := r.queue.PoisonQueue()
	body := branches[1].Body
	_ = r.queue.Delete(t.Context(), branches[1])
	for i := range 3 {
		if err := poison.Enqueue(t.Context(), body, 0); err != nil {
			t.Fatal(err)
		}
		if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
			t.Fatalf("sweep %d rescued %d (%v)", i, n, err)
		}
		back, _ := r.queue.Receive(t.Context(), 1, time.Minute)
		if len(back) != 1 || !strings.Contains(string(back[0].Body), `"br":1,`) || !strings.Contains(string(back[0].Body), `"bs":1`) {
			t.Fatalf("rescued items %v", back)
		}
		body = back[0].Body
		_ = r.queue.Delete(t.Context(), back[0])
	}
	if err := r.e.HandleWorkItem(t.Context(), body, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.e.HandleWorkItem(t.Context(), branches[0].Body, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.queue.Delete(t.Context(), branches[0])
	r.drive(t)
	assertFanDone(t, r, id, 2)
}
