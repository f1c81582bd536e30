package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// TestEngine_Status_PendingThenRunningDuringFirstVisit: a run reads Pending (custom status
// null) until a worker takes it, and Running with current_node = entrypoint while the
// entrypoint's handler runs.
func TestEngine_Status_PendingThenRunningDuringFirstVisit(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	gated := chainGraph(t, "gated", 2, func(ctx context.Context, s counterState) (any, error) {
		if s.N == 0 {
			close(entered)
			<-release
		}
		return durable.Update{"n": s.N + 1}, nil
	})
	r := newRig(t, engine.Options{}, false, gated)
	id := r.start(t, "gated", "first-visit", `{}`)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusPending || string(run.CustomStatus) != "null" && run.CustomStatus != nil {
		t.Fatalf("before a worker: status %s, custom %s; want Pending, null", run.RuntimeStatus, run.CustomStatus)
	}
	done := make(chan struct{})
	go func() { defer close(done); r.drive(t) }()
	<-entered
	run, err = r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var custom map[string]any
	_ = json.Unmarshal(run.CustomStatus, &custom)
	if run.RuntimeStatus != engine.StatusRunning || custom["current_node"] != "n0" || custom["graph_name"] != "gated" {
		t.Fatalf("during the first visit: status %s, custom %s; want Running at n0", run.RuntimeStatus, run.CustomStatus)
	}
	close(release)
	<-done
	if run := r.wait(t, id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("final status %s", run.RuntimeStatus)
	}
}

// TestEngine_IdempotencyKey_DistinctForReplacedRun: a finished run replaced under the same
// instance id gives its handlers new idempotency keys, so deduplicated side effects of the
// old run do not swallow the new run's.
func TestEngine_IdempotencyKey_DistinctForReplacedRun(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 4)
	g := chainGraph(t, "keyed", 1, func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		keys <- info.IdempotencyKey()
		return nil, nil
	})
	r := newRig(t, engine.Options{}, false, g)
	for range 2 {
		r.start(t, "keyed", "reused", `{}`)
		r.drive(t)
		if run := r.wait(t, "reused"); run.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("status %s", run.RuntimeStatus)
		}
	}
	first, second := <-keys, <-keys
	if !strings.HasPrefix(first, "reused:1.") || !strings.HasSuffix(first, ":1") ||
		!strings.HasPrefix(second, "reused:2.") || !strings.HasSuffix(second, ":1") {
		t.Fatalf("keys %q and %q, want reused:1.<nonce>:1 and reused:2.<nonce>:1", first, second)
	}
}

// Issue #10, defect 8 (engine side; the HTTP side is in runsapi's contract tests).
func TestEngine_BadRunIDs_NotFoundBeforeStorage(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	for _, id := range []string{"a/b", `a\b`, "a#b", "a?b", "ctl\x01", strings.Repeat("x", 513)} {
		errs := []error{
			r.e.RaiseEvent(t.Context(), id, "e", nil),
			r.e.CancelRun(t.Context(), id, ""),
			r.e.PurgeRun(t.Context(), id),
		}
		_, err := r.e.History(t.Context(), id, "", 0)
		errs = append(errs, err)
		_, err = r.e.GetRun(t.Context(), id)
		errs = append(errs, err)
		for i, err := range errs {
			if !errors.Is(err, engine.ErrRunNotFound) {
				t.Errorf("id %q, call %d: %v, want ErrRunNotFound", id, i, err)
			}
		}
	}
	if n := r.counts.Table(); n != 0 {
		t.Errorf("%d table operations for ids no run can have", n)
	}
}

// Product rule: a non-empty event body that is not JSON is refused and nothing is stored.
func TestEngine_RaiseEvent_NonJSONPayloadRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": tr`)); !errors.Is(err, engine.ErrInvalidEventPayload) {
		t.Fatalf("truncated payload: %v, want ErrInvalidEventPayload", err)
	}
	if strings.Contains(strings.Join(checkHistory(t, r.history(t, id)), " "), engine.HistoryEventReceived) {
		t.Fatal("a refused event was stored")
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", nil); err != nil { // empty still means null
		t.Fatal(err)
	}
}

// Issue #18, names: an event name outside ValidEventName (one above a table property used
// to fail with a 500 from storage) is refused before anything is read or stored.
func TestEngine_RaiseEvent_NamePastTheLimit_RefusedBeforeStorage(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	r.counts.Reset()
	for _, name := range []string{"", strings.Repeat("e", 257), strings.Repeat("e", 40<<10), "a\x00b", "a\nb", "a\u009fb", "bad\xffutf8"} {
		if err := r.e.RaiseEvent(t.Context(), id, name, nil); !errors.Is(err, engine.ErrInvalidEventName) {
			t.Errorf("event name of %d bytes: %v, want ErrInvalidEventName", len(name), err)
		}
	}
	if n := r.counts.Table(); n != 0 {
		t.Errorf("%d table operations for refused event names", n)
	}
	for _, name := range []string{strings.Repeat("e", 256), strings.Repeat("😀", 128), "a/b#c?d\\e"} {
		if !engine.ValidEventName(name) {
			t.Errorf("ValidEventName(%.20q…) = false, want true", name)
		}
	}
	if engine.ValidEventName(strings.Repeat("😀", 129)) {
		t.Error("258 UTF-16 code units accepted")
	}
	for name, want := range map[string]bool{"support_agent": true, "café": true, "a/b": false, "a#b": false, "a?b": false, "a\\b": false, "": false} {
		if got := engine.ValidGraphName(name); got != want {
			t.Errorf("ValidGraphName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Product rule: WaitRun waits for a finished run unless told to stop at a wait.
func TestEngine_WaitRun_DefaultWaitsForFinished(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	if run := r.waitFor(t, id, engine.RunSettled); run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("settled at %s, want Running (waiting)", run.RuntimeStatus)
	}
	// Nothing wakes the run: WaitRun(nil) must keep waiting until its context ends.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if run, err := r.e.WaitRun(ctx, id, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRun(nil) returned a %s run (err %v) while the run waits for an event", run.RuntimeStatus, err)
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true}`)); err != nil {
		t.Fatal(err)
	}
	if run := r.waitFor(t, id, nil); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("WaitRun(nil) returned a %s run, want the finished one", run.RuntimeStatus)
	}
}

// quoteShyStore is a memory store that, like the Azure table store, cannot update rows whose
// partition key holds a single quote.
type quoteShyStore struct{ *memory.Store }

func (quoteShyStore) CheckPartitionKey(pk string) error {
	if strings.Contains(pk, "'") {
		return errors.New("no quotes")
	}
	return nil
}

// TestEngine_StartRun_IDTheStoreCannotUpdate_Refused: a run id the store cannot step is refused
// at start (ErrInvalidInstanceID), nothing stored, instead of a run stuck at its first commit.
func TestEngine_StartRun_IDTheStoreCannotUpdate_Refused(t *testing.T) {
	t.Parallel()
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
	st := quoteShyStore{memory.NewStore()}
	e, err := engine.New(engine.Options{Registry: reg, Store: st, Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "it's", Input: []byte(`{"source_url":"u"}`)})
	if !errors.Is(err, engine.ErrInvalidInstanceID) {
		t.Fatalf("err = %v, want ErrInvalidInstanceID", err)
	}
	if page, _ := st.Query(t.Context(), engine.Query{PartitionKey: "it's"}); len(page.Entities) != 0 {
		t.Fatalf("%d rows stored for a refused id", len(page.Entities))
	}
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "its", Input: []byte(`{"source_url":"u"}`)}); err != nil {
		t.Fatalf("a plain id: %v", err)
	}
}
