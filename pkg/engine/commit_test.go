package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestEngine_LargeValues_SpillToPayloadStore(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 2, nil))
	pad := strings.Repeat("é", 40000) // 40 000 UTF-16 units: above the inline limit
	in, _ := json.Marshal(map[string]any{"pad": pad})
	id := r.start(t, "big", "", string(in))
	r.drive(t)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["pad"] != pad || stateOf(t, run)["n"] != 2.0 {
		t.Fatalf("status %s, output of %d bytes", run.RuntimeStatus, len(run.Output))
	}
	var initial map[string]any
	if err := json.Unmarshal(run.Input.InitialState, &initial); err != nil || initial["pad"] != pad {
		t.Fatalf("input not restored: %v", err)
	}
	head, err := r.store.Get(t.Context(), id, "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"StateRef", "OutputRef", "InputRef"} {
		if ref, _ := head.Properties[p].(string); !strings.HasPrefix(ref, id+"/"+head.Properties["Nonce"].(string)+"/") {
			t.Errorf("head %s = %q, want a payload key", p, ref)
		}
	}
	for _, ev := range r.history(t, id) {
		if !json.Valid(ev.Data) {
			t.Errorf("history row %d data is not JSON", ev.Sequence)
		}
	}
	// A large event payload too.
	reviewer := strings.Repeat("r", 50000)
	payload, _ := json.Marshal(map[string]any{"approved": true, "reviewer": reviewer})
	sid := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), sid, "approval", payload); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run, _ = r.e.GetRun(t.Context(), sid)
	if run.RuntimeStatus != engine.StatusCompleted || !strings.HasSuffix(stateOf(t, run)["final_response"].(string), reviewer+".") {
		t.Fatalf("large event: status %s", run.RuntimeStatus)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), sid); err != nil {
		t.Fatal(err)
	}
	if n := r.payloads.Len(); n != 0 {
		t.Errorf("%d payloads left after purging every run", n)
	}
}

// TestEngine_StorageOps_PerStep counts storage operations through the instrumented store:
// a steady-state node step costs one table batch and no queue operation, because the worker
// that holds the run's work item continues it in-process.
func TestEngine_StorageOps_PerStep(t *testing.T) {
	t.Parallel()
	measure := func(steps int) (table, queue int64) {
		r := newRig(t, engine.Options{}, false, chainGraph(t, fmt.Sprintf("ops%d", steps), steps, nil))
		r.start(t, fmt.Sprintf("ops%d", steps), "", `{}`)
		r.drive(t)
		if r.counts.Payload() != 0 {
			t.Errorf("small state touched the payload store %d times", r.counts.Payload())
		}
		return r.counts.Table(), r.counts.Queue()
	}
	t3, q3 := measure(3)
	t12, q12 := measure(12)
	t.Logf("3-step run: %d table + %d queue ops (%.2f per step); 12-step run: %d + %d", t3, q3, float64(t3+q3)/3, t12, q12)
	// Per run: due row + start batch + due delete + head read + the Pending→Running merge +
	// one batch per step, plus the run index (four inserts at start, two merges and two
	// deletes at the finish); enqueue + receive + delete.
	// A store that returns no ETags costs one head read more per commit that goes on (all
	// but the last).
	perCommit := int64(1)
	if noETags {
		perCommit = 2
	}
	if want := 8 + 8 + (perCommit-1)*3; t3 != want || q3 != 3 {
		t.Errorf("3-step run: %d table ops and %d queue ops, want %d and 3", t3, q3, want)
	}
	perStep := float64((t12+q12)-(t3+q3)) / 9
	if perStep > float64(perCommit) || t12-t3 != 9*perCommit || q12 != q3 {
		t.Errorf("steady-state step costs %.2f ops (table %d, queue %d over 9 steps), want ≤ 2", perStep, t12-t3, q12-q3)
	}
}

// Issue #10, defect 3.
func TestEngine_NoETagStore_EventLandsAfterCommit_RunNotStalled(t *testing.T) {
	t.Parallel()
	r := newRigETags(t, false, engine.Options{}, false)
	var raised atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		// Another writer touches the head between the commit and the engine's read-back.
		if commitsNode(ops, "extract") && raised.CompareAndSwap(false, true) {
			return r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "unrelated", json.RawMessage(`1`))
		}
		return nil
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s: the successful commit was taken for a lost one and the run stalled", run.RuntimeStatus)
	}
}

// Issue #10, also measured 2: a route whose event name cannot be stored fails the run at once.
func TestEngine_RouteEventNameTooLargeForProperty_FailsOnFirstAttempt(t *testing.T) {
	t.Parallel()
	var routes atomic.Int32
	b := durable.NewManifestBuilder[counterState]("huge")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", incr, durable.WithHandlerName("test.huge.a"), durable.WithRouteName("test.huge.route"),
		durable.WithRoute(func(context.Context, counterState) (any, error) {
			routes.Add(1)
			return durable.WaitForEvent(strings.Repeat("e", 40000), "b"), nil
		}))
	_ = b.AddNode("b", incr, durable.WithHandlerName("test.huge.b"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "huge", "", `{}`)
	r.drive(t)
	run, _ := r.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusFailed || !strings.HasPrefix(outputString(t, run), "orchestrator failed: step result too large to store: ") || routes.Load() != 1 {
		t.Fatalf("status %s output %s after %d route runs, want a clear failure on the first", run.RuntimeStatus, run.Output, routes.Load())
	}
}

// Issue #10, also measured 4: payloads of rebased and dropped commits are not left behind.
func TestEngine_RebasedAndDroppedCommits_LeaveNoOrphanPayloads(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("q", 40000)
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	big := func(ctx context.Context, s counterState) (any, error) {
		if s.Limit == 1 { // the run that gets cancelled mid-step
			once.Do(func() { close(inside); <-release })
		}
		return durable.Update{"n": s.N + 1, "pad": pad + strings.Repeat("x", s.N)}, nil
	}
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 3, big))
	var raised atomic.Bool
	rebased := r.start(t, "big", "", `{}`)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if ops[0].Entity.PartitionKey == rebased && commitsNode(ops, "n1") && raised.CompareAndSwap(false, true) {
			return r.e.RaiseEvent(context.Background(), rebased, "noise", json.RawMessage(`1`)) // forces a rebase
		}
		return nil
	}
	r.drive(t)
	cancelled := r.start(t, "big", "", `{"limit":1}`)
	done := make(chan struct{})
	go func() { defer close(done); r.drive(t) }()
	<-inside
	// Cancelled and purged while its step runs: the late worker's commit finds no head.
	if err := r.e.CancelRun(t.Context(), cancelled, "stop"); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), cancelled); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	if !raised.Load() {
		t.Fatal("no rebase happened")
	}
	// Every stored payload is referenced by a row of the one remaining run.
	refs := map[string]bool{}
	page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: rebased})
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range page.Entities {
		for name, v := range ent.Properties {
			if s, ok := v.(string); ok && strings.HasSuffix(name, "Ref") && s != "" {
				refs[s] = true
			}
		}
	}
	if n := r.payloads.Len(); n != len(refs) {
		t.Fatalf("%d payloads stored, %d referenced: orphans of a rebase or a late worker", n, len(refs))
	}
}

// A graph that waits twice for the same event name: the first event's inbox row is deleted
// with the commit that applies it, so the second wait gets the second event, not the first
// one again. (Guards buildCommit's deletion of the consumed inbox row.)
func TestEngine_WaitTwiceForOneEventName_ConsumedEventNotAppliedAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, twiceGraph(t))
	id := r.start(t, "twice", "", `{}`)
	r.drive(t)
	raise := func(payload string) {
		t.Helper()
		if err := r.e.RaiseEvent(t.Context(), id, "go", json.RawMessage(payload)); err != nil {
			t.Fatal(err)
		}
		r.drive(t)
	}
	raise(`"A"`)
	assertStatus(t, r, id, engine.StatusRunning) // waiting at wait2
	if page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: id, RowKeyFrom: "i", RowKeyTo: "j"}); err != nil || len(page.Entities) != 0 {
		t.Fatalf("inbox rows after the event was applied: %v %v", page.Entities, err)
	}
	raise(`"B"`)
	run := assertStatus(t, r, id, engine.StatusCompleted)
	if got := fmt.Sprint(stateOf(t, run)["seen"]); got != "[A B]" {
		t.Fatalf("events applied: %s, want [A B]", got)
	}
}

// Two workers run the same failing step at once and both schedule its retry: one commit
// counts the attempt, the other is dropped, not rebased into a second attempt. (Guards
// commit.go's retry-attempt check.)
func TestEngine_TwoWorkersScheduleOneRetry_OneAttemptCounted(t *testing.T) {
	t.Parallel()
	var entered sync.WaitGroup
	entered.Add(2)
	var calls atomic.Int32
	failing := func(context.Context, counterState) (any, error) {
		if calls.Add(1) <= 2 {
			entered.Done()
			entered.Wait() // both workers are inside the node
		}
		return nil, fmt.Errorf("flaky")
	}
	policy := engine.GraphPolicy{Retry: engine.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Hour}}
	r := newRig(t, engine.Options{Policies: map[string]engine.GraphPolicy{"retried": policy}}, false, chainGraph(t, "retried", 1, failing))
	id := r.start(t, "retried", "", `{}`)
	msgs, _ := r.queue.Receive(t.Context(), 1, time.Minute)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, 1); err != nil {
				t.Errorf("HandleWorkItem: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := countHistory(t, r, id, engine.HistoryNodeRetryScheduled); n != 1 {
		t.Fatalf("%d retries scheduled by two workers of one attempt, want 1: %v", n, checkHistory(t, r.history(t, id)))
	}
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryNodeRetryScheduled && !strings.Contains(string(ev.Data), `"attempt":2`) {
			t.Fatalf("retry row %s, want the second attempt next", ev.Data)
		}
	}
}
