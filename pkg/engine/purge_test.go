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

func TestEngine_PurgeRun_OnlyFinished(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.start(t, "support_agent", "w", `{"user_message":"refund"}`)
	r.start(t, "data_pipeline", "d", `{"source_url":"u"}`)
	r.drive(t)
	var active *engine.RunNotFinishedError
	if err := r.e.PurgeRun(t.Context(), "w"); !errors.As(err, &active) || active.Status != engine.StatusRunning {
		t.Fatalf("purge of a waiting run: %v", err)
	}
	if err := r.e.PurgeRun(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), "d"); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("purged run still readable: %v", err)
	}
	page, _ := r.store.Query(t.Context(), engine.Query{PartitionKey: "d"})
	if len(page.Entities) != 0 {
		t.Fatalf("%d rows left after purge", len(page.Entities))
	}
}

// bigInput is an initial state above the inline limit, so the run's input spills.
func bigInput() string {
	b, _ := json.Marshal(map[string]any{"pad": strings.Repeat("p", 40000)})
	return string(b)
}

// isHeadDelete reports whether a batch deletes a run head.
func isHeadDelete(ops []engine.Op) bool {
	return len(ops) == 1 && ops[0].Kind == engine.OpDelete && ops[0].Entity.RowKey == "r"
}

// Issue #10, defect 1.
func TestEngine_PurgeRacingStartOfSameID_NewRunKeepsItsPayloads(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 1, nil))
	r.start(t, "big", "x", bigInput())
	r.drive(t)
	var restarted atomic.Bool
	r.fstore.AfterSubmit = func(ops []engine.Op) error {
		// Between the purge's head delete and its payload delete, the id starts again.
		if isHeadDelete(ops) && restarted.CompareAndSwap(false, true) {
			if _, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "big", InstanceID: "x", Input: json.RawMessage(bigInput())}); err != nil {
				t.Errorf("restart: %v", err)
			}
		}
		return nil
	}
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if !restarted.Load() {
		t.Fatal("the purge never deleted the head")
	}
	if _, err := r.e.GetRun(t.Context(), "x"); err != nil {
		t.Fatalf("the new run lost its payloads to the purge: %v", err)
	}
	r.drive(t)
	if run := r.waitFor(t, "x", nil); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("new run: %s %s", run.RuntimeStatus, run.Output)
	}
}

// Issue #10, defect 2.
func TestEngine_PurgeThenRestart_KeysAndWorkItemsNeverCollide(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 8)
	var visits atomic.Int32
	g := chainGraph(t, "keyed", 1, func(ctx context.Context, s counterState) (any, error) {
		visits.Add(1)
		info, _ := durable.StepInfoFrom(ctx)
		keys <- info.IdempotencyKey()
		return nil, nil
	})
	r := newRig(t, engine.Options{}, false, g)
	var items [][]byte
	r.fqueue.OnEnqueue = func(body []byte) (int, error) {
		items = append(items, append([]byte(nil), body...))
		return 1, nil
	}
	r.start(t, "keyed", "reused", `{}`)
	oldItem := items[0]
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "reused"); err != nil {
		t.Fatal(err)
	}
	r.start(t, "keyed", "reused", `{}`)
	// A late copy of the purged run's first work item must not drive the new run.
	if err := r.e.HandleWorkItem(t.Context(), oldItem, 1); err != nil {
		t.Fatal(err)
	}
	if run, _ := r.e.GetRun(t.Context(), "reused"); run.RuntimeStatus != engine.StatusPending || visits.Load() != 1 {
		t.Fatalf("the purged run's work item drove the new run: status %s, %d visits", run.RuntimeStatus, visits.Load())
	}
	r.drive(t)
	first, second := <-keys, <-keys
	if first == second {
		t.Fatalf("the purged run and its successor share the idempotency key %q", first)
	}
}

// Issue #32, finding 7: the payloads of a run replaced while payload deletes fail do not
// outlive the purge of its id — the replacing start's due row names the replaced run, and the
// repair pass deletes its payloads.
func TestEngine_ReplacedRunsPayloads_GoWithTheID(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, chainGraph(t, "big", 1, nil))
	r.start(t, "big", "x", bigInput())
	r.drive(t)
	if r.payloads.Len() == 0 {
		t.Fatal("the first run stored no payload: the scenario tests nothing")
	}
	r.outage.Affects = func(op string) bool { return op == enginetest.OpPayloadDelete }
	r.outage.Begin() // the replacement's clean-up cannot delete the replaced run's payloads
	clk.advance(time.Second)
	r.start(t, "big", "x", bigInput())
	r.outage.End()
	r.drive(t)
	if err := r.e.PurgeRun(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Minute)
	if _, err := r.e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := r.payloads.Len(); n != 0 {
		t.Fatalf("%d payloads left after the purge of the id", n)
	}
	if n, d := dueRows(t, r), fenceClaims(t, r); n != 0 || d != 0 {
		t.Fatalf("%d due rows and %d fence claims left", n, d)
	}
}

// fenceClaims counts the claim rows a reader inserted to fence a start (fence.go).
func fenceClaims(t *testing.T, r *rig) int {
	t.Helper()
	return countRows(t, r, func(ent engine.Entity) bool { return ent.Properties["Fenced"] == true })
}
