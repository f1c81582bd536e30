package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// Each test is one kind of write whose answer is ambiguous (ambiguity_rig_test.go): the
// engine must resolve it by a read and end in the state a clean answer would have given.

const pipelineInput = `{"source_url":"https://example.com/data"}`

func TestEngine_AmbiguousStart_AnswersForItsOwnRun(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsHistory(engine.HistoryRunStarted), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		arm()
		// Not a *RunExistsError for its own run, and its index and due rows stay.
		id := r.start(t, "data_pipeline", "own-start", pipelineInput)
		r.drive(t)
		assertPipelineDone(t, r, id)
		assertNoOrphans(t, r, id)
	})
}

func TestEngine_AmbiguousRestart_ReplacesTheFinishedRun(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsHistory(engine.HistoryRunStarted), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		r.start(t, "data_pipeline", "again", pipelineInput)
		r.drive(t)
		arm() // the second start (a replace of the finished head) is the ambiguous one
		id := r.start(t, "data_pipeline", "again", pipelineInput)
		r.drive(t)
		assertPipelineDone(t, r, id)
		assertNoOrphans(t, r, id)
		if gens := rowsNaming(t, r, "RunID", id); len(gens) == 0 || gens[0].Properties["Gen"] != int64(2) {
			t.Fatalf("index rows %v, want generation 2", gens)
		}
	})
}

func TestEngine_AmbiguousStepCommit_RunGoesOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pick func([]engine.Op) bool
	}{
		{"first visit begins", beginsRun},
		{"node visit", func(ops []engine.Op) bool { return commitsNode(ops, "transform") }},
		{"last visit completes", insertsHistory(engine.HistoryRunCompleted)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachAmbiguity(t, tt.pick, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
				r := mk(engine.Options{})
				arm()
				id := r.start(t, "data_pipeline", "", pipelineInput)
				r.drive(t) // one delivery: the run must not stall Running with nothing queued
				assertPipelineDone(t, r, id)
				assertNoOrphans(t, r, id)
			})
		})
	}
}

func TestEngine_AmbiguousWaitAndEventCommits_RunGoesOn(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{engine.HistoryWaitStarted, engine.HistoryEventApplied} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			forEachAmbiguity(t, insertsHistory(typ), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
				r := mk(engine.Options{})
				arm()
				id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
				r.drive(t)
				assertStatus(t, r, id, engine.StatusRunning)
				if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
					t.Fatal(err)
				}
				r.drive(t)
				run := assertStatus(t, r, id, engine.StatusCompleted)
				if !strings.HasSuffix(stateOf(t, run)["final_response"].(string), "Reviewer: r.") {
					t.Fatalf("output %s", run.Output)
				}
				for _, typ := range []string{engine.HistoryWaitStarted, engine.HistoryEventReceived, engine.HistoryEventApplied} {
					if n := countHistory(t, r, id, typ); n != 1 {
						t.Errorf("%d %s rows, want 1", n, typ)
					}
				}
				assertNoOrphans(t, r, id)
			})
		})
	}
}

func TestEngine_AmbiguousRetryScheduled_OneAttemptCounted(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsHistory(engine.HistoryNodeRetryScheduled), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		clk := newFakeClock()
		policy := engine.GraphPolicy{Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Minute}}
		r := mk(engine.Options{Clock: clk.now, Policies: map[string]engine.GraphPolicy{"twice": policy}})
		arm()
		id := r.start(t, "twice", "", `{"fail":1}`)
		r.drive(t) // the first attempt fails; its retry is scheduled (ambiguously) a minute out
		clk.advance(2 * time.Minute)
		r.drive(t)
		if n := countHistory(t, r, id, engine.HistoryNodeRetryScheduled); n != 1 {
			t.Fatalf("%d retries scheduled, want 1", n)
		}
		assertStatus(t, r, id, engine.StatusRunning) // waiting for "go"
		if n := countHistory(t, r, id, engine.HistoryWaitStarted); n != 1 {
			t.Fatalf("%d waits after the retry, want 1", n)
		}
	})
}

func TestEngine_AmbiguousEvent_StoredOnce(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "k1"} {
		t.Run("key="+key, func(t *testing.T) {
			t.Parallel()
			forEachAmbiguity(t, insertsInbox, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
				r := mk(engine.Options{})
				arm()
				id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
				r.drive(t)
				var opts []engine.EventOption
				if key != "" {
					opts = append(opts, engine.WithIdempotencyKey(key))
				}
				if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`), opts...); err != nil {
					t.Fatalf("RaiseEvent: %v", err)
				}
				r.drive(t)
				assertStatus(t, r, id, engine.StatusCompleted)
				if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
					t.Fatalf("%d events stored for one accepted raise", n)
				}
				assertNoOrphans(t, r, id)
			})
		})
	}
}

func TestEngine_AmbiguousEventBeforeWait_StoredOnce(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsInbox, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		arm()
		id := r.start(t, "support_agent", "", `{"user_message":"refund"}`) // Pending: no wait yet
		if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`)); err != nil {
			t.Fatalf("RaiseEvent: %v", err)
		}
		r.drive(t)
		assertStatus(t, r, id, engine.StatusCompleted)
		if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
			t.Fatalf("%d events stored for one accepted raise", n)
		}
	})
}

func TestEngine_AmbiguousCancel_Succeeds(t *testing.T) {
	t.Parallel()
	forEachAmbiguity(t, insertsHistory(engine.HistoryRunTerminated), func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		arm()
		id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
		r.drive(t)
		if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
			t.Fatalf("CancelRun: %v (a cancel that succeeded must not answer 'not running')", err)
		}
		run := assertStatus(t, r, id, engine.StatusTerminated)
		if outputString(t, run) != "stop" || countHistory(t, r, id, engine.HistoryRunTerminated) != 1 {
			t.Fatalf("output %s", run.Output)
		}
		assertNoOrphans(t, r, id) // the index update ran: no active row left
	})
}

func TestEngine_AmbiguousPurge_Succeeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pick func([]engine.Op) bool
	}{
		{"head delete", isHeadDelete},
		{"history delete", deletesHistory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachAmbiguity(t, tt.pick, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
				r := mk(engine.Options{})
				id := r.start(t, "big", "", bigInput())
				r.drive(t)
				arm()
				if err := r.e.PurgeRun(t.Context(), id); err != nil {
					t.Fatalf("PurgeRun: %v", err)
				}
				if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
					t.Fatalf("purged run still readable: %v", err)
				}
				if page, _ := r.store.Query(t.Context(), engine.Query{PartitionKey: id}); len(page.Entities) != 0 {
					t.Fatalf("%d rows left after the purge", len(page.Entities))
				}
				if n := r.payloads.Len(); n != 0 {
					t.Fatalf("%d payloads left after the purge", n)
				}
				assertNoOrphans(t, r, id)
			})
		})
	}
}

func TestEngine_AmbiguousIndexUpdates_NoOrphanRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		arm  func(r *rig)
	}{
		// Every index write loses its reply: inserts meet their own rows, merges and deletes
		// repeat.
		{"lost replies", func(r *rig) { r.fstore.LoseReply = writesIndex }},
		// Every status update and removal is applied, then answers an error. (A start whose
		// index insert answers an error fails before its head is written.)
		{"applied, then errors", func(r *rig) {
			r.fstore.AfterSubmit = func(ops []engine.Op) error {
				if writesIndex(ops) && ops[0].Kind != engine.OpInsert {
					return enginetest.ErrInjected
				}
				return nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false)
			tt.arm(r)
			done := r.start(t, "data_pipeline", "", pipelineInput)
			cancelled := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
			r.drive(t)
			if err := r.e.CancelRun(t.Context(), cancelled, "stop"); err != nil {
				t.Fatal(err)
			}
			assertPipelineDone(t, r, done)
			for _, id := range []string{done, cancelled} {
				assertNoOrphans(t, r, id)
			}
			list, err := r.e.ListRuns(t.Context(), engine.RunQuery{Status: engine.StatusRunning})
			if err != nil || len(list.Runs) != 0 {
				t.Fatalf("running runs listed: %v %v", list.Runs, err)
			}
		})
	}
}

func TestEngine_AmbiguousEnqueue_RunOnce(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
	// Every enqueue is queued twice (a lost reply the SDK retried) and answers an error
	// (its retries failed): the start's and every hand-off's.
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 2, nil }
	r.fqueue.AfterEnqueue = func([]byte) error { return enginetest.ErrInjected }
	id := r.start(t, "data_pipeline", "", pipelineInput)
	r.drive(t)
	assertPipelineDone(t, r, id)
	clk.advance(2 * time.Minute) // the start's due row is overdue: the run progressed, so nothing to repair
	if n, err := r.e.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("sweep dispatched %d (%v)", n, err)
	}
	assertNoOrphans(t, r, id)
}

func TestEngine_AmbiguousQueueDelete_ItemNotRedelivered(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	var lost atomic.Int32
	r.fqueue.LoseDelete = func(engine.Message) bool { lost.Add(1); return true }
	if err := r.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ids := []string{r.start(t, "data_pipeline", "", pipelineInput), r.start(t, "data_pipeline", "", pipelineInput)}
	for _, id := range ids {
		r.waitFor(t, id, func(run engine.Run) bool { return run.RuntimeStatus.Finished() })
		assertPipelineDone(t, r, id)
	}
	// The deleted items are gone: nothing comes back after the visibility timeout.
	if err := r.e.Close(); err != nil {
		t.Fatal(err)
	}
	if lost.Load() == 0 {
		t.Fatal("no delete reply was lost")
	}
	if n := r.queue.Len(); n != 0 {
		t.Fatalf("%d work items left in the queue", n)
	}
}

func TestEngine_UnknownOutcomeNotApplied_StartFailsAndRetrySucceeds(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	var failed bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if !failed && insertsHistory(engine.HistoryRunStarted)(ops) {
			failed = true
			return enginetest.ErrInjected // a 503 whose retries failed: nothing written
		}
		return nil
	}
	_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "s", Input: json.RawMessage(pipelineInput)})
	var exists *engine.RunExistsError
	if err == nil || errors.As(err, &exists) || !errors.Is(err, enginetest.ErrInjected) {
		t.Fatalf("StartRun: %v, want the storage error", err)
	}
	if _, err := r.e.GetRun(t.Context(), "s"); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("a start that was not stored is readable: %v", err)
	}
	id := r.start(t, "data_pipeline", "s", pipelineInput) // the client's retry
	r.drive(t)
	assertPipelineDone(t, r, id)
}

// twiceGraph is "twice": node "wait1" fails its first {"fail":n} attempts, then waits for
// "go" and resumes at "wait2", which waits for "go" again and resumes at "done". The "go"
// handler appends the payload to "seen".
func twiceGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[twiceState]("twice")
	b.SetEntrypoint("wait1")
	waitThen := func(next string) durable.RouteFunc[twiceState] {
		return func(context.Context, twiceState) (any, error) { return durable.WaitForEvent("go", next), nil }
	}
	flaky := func(ctx context.Context, s twiceState) (any, error) {
		if info, _ := durable.StepInfoFrom(ctx); info.Attempt <= s.Fail {
			return nil, errors.New("flaky")
		}
		return nil, nil
	}
	noop := func(context.Context, twiceState) (any, error) { return nil, nil }
	for _, err := range []error{
		b.AddNode("wait1", flaky, durable.WithHandlerName("test.twice.wait1"), durable.WithRoute(waitThen("wait2")), durable.WithRouteName("test.twice.r1")),
		b.AddNode("wait2", noop, durable.WithHandlerName("test.twice.wait2"), durable.WithRoute(waitThen("done")), durable.WithRouteName("test.twice.r2")),
		b.AddNode("done", noop, durable.WithHandlerName("test.twice.done"), durable.Terminal()),
		b.AddEventHandler("go", func(_ context.Context, s twiceState, payload json.RawMessage) (any, error) {
			var v string
			_ = json.Unmarshal(payload, &v)
			return durable.Update{"seen": append(s.Seen, v)}, nil
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type twiceState struct {
	Fail int      `json:"fail"`
	Seen []string `json:"seen"`
}

// Issue #32: the history-row witness. In the tests above nobody writes between an ambiguous
// write and its read-back, so the head still carries the write's id. Here another writer
// moves the head in between (it stamps its own write id), and only the first history row the
// write inserted can say whose write is stored (resolveWrite's ownRow).

// otherWrites moves a run's head the way any writer does: a merge stamped with a write id of
// its own. It goes straight to the memory store, past the faults.
func otherWrites(r *rig, runID string) {
	_, err := r.store.Submit(context.Background(), []engine.Op{{Kind: engine.OpMerge, IfMatch: engine.ETagAny,
		Entity: engine.Entity{PartitionKey: runID, RowKey: "r", Properties: map[string]any{"WriteID": "another-writer"}}}})
	if err != nil {
		panic(err)
	}
}

func TestEngine_AmbiguousCancel_HeadMovedBeforeTheReadBack_Succeeds(t *testing.T) {
	t.Parallel()
	forEachAmbiguityMeanwhile(t, insertsHistory(engine.HistoryRunTerminated), func(r *rig, ops []engine.Op) {
		otherWrites(r, ops[0].Entity.PartitionKey)
	}, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
		r.drive(t)
		arm()
		if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
			t.Fatalf("CancelRun: %v (a cancel that was stored must succeed)", err)
		}
		run := assertStatus(t, r, id, engine.StatusTerminated)
		if outputString(t, run) != "stop" || countHistory(t, r, id, engine.HistoryRunTerminated) != 1 {
			t.Fatalf("output %s", run.Output)
		}
	})
}

func TestEngine_AmbiguousEventWithoutKey_HeadMovedBeforeTheReadBack_StoredOnce(t *testing.T) {
	t.Parallel()
	forEachAmbiguityMeanwhile(t, insertsInbox, func(r *rig, ops []engine.Op) {
		// Another client's event on the same run.
		if err := r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "approval", json.RawMessage(`{"approved":false,"reviewer":"other"}`)); err != nil {
			panic(err)
		}
	}, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		id := r.start(t, "support_agent", "", `{"user_message":"refund"}`) // Pending: the events stay in the inbox
		arm()
		if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"me"}`)); err != nil {
			t.Fatalf("RaiseEvent: %v (an event that was stored must be accepted)", err)
		}
		mine := 0
		for _, h := range r.history(t, id) {
			if h.Type == engine.HistoryEventReceived && strings.Contains(string(h.Data), `"reviewer":"me"`) {
				mine++
			}
		}
		if n := countHistory(t, r, id, engine.HistoryEventReceived); mine != 1 || n != 2 {
			t.Fatalf("%d events stored, %d of them this raise's; want 2 and 1", n, mine)
		}
	})
}

func TestEngine_AmbiguousStepCommit_HeadMovedBeforeTheReadBack_RunGoesOn(t *testing.T) {
	t.Parallel()
	forEachAmbiguityMeanwhile(t, func(ops []engine.Op) bool { return commitsNode(ops, "n1") }, func(r *rig, ops []engine.Op) {
		// An event the run does not wait for: stored, the head's write id is the event's.
		if err := r.e.RaiseEvent(context.Background(), ops[0].Entity.PartitionKey, "noise", nil); err != nil {
			panic(err)
		}
	}, func(t *testing.T, mk func(engine.Options) *rig, arm func()) {
		r := mk(engine.Options{})
		arm()
		id := r.start(t, "three", "", `{}`)
		r.drive(t) // one delivery: a landed commit must not pass for "the run moved on"
		run := assertStatus(t, r, id, engine.StatusCompleted)
		if n := stateOf(t, run)["n"]; n != 3.0 {
			t.Fatalf("n = %v, want 3", n)
		}
		if n := countHistory(t, r, id, engine.HistoryNodeCompleted); n != 3 {
			t.Fatalf("%d nodes committed, want 3", n)
		}
	})
}
