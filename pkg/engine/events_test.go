package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

const approval = `{"approved":true,"reviewer":"r"}`

// Two raises with one Idempotency-Key at once: both are accepted, one event is stored.
// The second request's batch meets the first's key row and answers success. (Guards
// events.go's key-conflict branch.)
func TestEngine_ConcurrentRaisesOneIdempotencyKey_BothAcceptedOneEvent(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	var inner atomic.Bool
	var innerErr error
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertsInbox(ops) && inner.CompareAndSwap(false, true) {
			// The other request is accepted while this one is about to write.
			innerErr = r.e.RaiseEvent(context.Background(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k"))
		}
		return nil
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if !inner.Load() || innerErr != nil {
		t.Fatalf("second request: ran %v, %v", inner.Load(), innerErr)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one key", n)
	}
}

// A keyed retry that arrives after the event made the run finish is accepted (202), not
// refused as "run finished" (409): the key says it is stored. (Guards events.go's check of
// the stored key before the run's status.)
func TestEngine_KeyedRetryAfterRunFinished_Accepted(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	assertStatus(t, r, id, engine.StatusCompleted)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("k")); err != nil {
		t.Fatalf("the client's retry of an accepted event: %v", err)
	}
	var finished *engine.RunFinishedError
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval), engine.WithIdempotencyKey("other")); !errors.As(err, &finished) {
		t.Fatalf("a new key on a finished run: %v, want *RunFinishedError", err)
	}
	if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored", n)
	}
}
