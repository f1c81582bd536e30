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

// An approval raised by a process that is paused while its batch is on its way (its clock
// does not move; the store's does): the repair pass, judging by the store's time, fences the
// head and deletes the event's due row; the batch fails on the ETag, the raise writes it
// again, and its wake-up enqueue fails. The raise answers success only with a due row the
// repair pass will find, so the run wakes — it does not wait for ever with the event in its
// inbox; when that row cannot be written either, the raise answers an error, and its retry
// with the same idempotency key wakes the run.
func TestEngine_LateEventBatch_RaiserClockStood_RunWakesOrRaiseFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		dueFails  bool // the due rows written after the late batch fail
		wantError bool
	}{{"due row written again", false, false}, {"due row cannot be written again", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute}, false)
			var paused atomic.Int64 // how far the raiser's clock fell behind the store's
			raiser, err := engine.New(engine.Options{Registry: r.reg, Store: r.fstore, Queue: r.fqueue, Payloads: r.payloads,
				Logger: r.e.Options().Logger, RepairAfter: time.Minute, SweepInterval: -1,
				Clock: func() time.Time { return clk.now().Add(-time.Duration(paused.Load())) }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = raiser.Close() })
			id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
			r.drive(t)
			down := failEnqueues(r)
			late := firstOnly(isEventBatch)
			var after atomic.Bool
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				if tc.dueFails && after.Load() && ops[0].Kind == engine.OpInsert && strings.HasPrefix(ops[0].Entity.PartitionKey, "§due-") {
					return enginetest.ErrInjected
				}
				if late(ops) {
					clk.advance(2 * time.Minute)
					paused.Add(int64(2 * time.Minute))
					if _, err := r.e.Sweep(context.Background()); err != nil {
						t.Errorf("sweep: %v", err)
					}
					after.Store(true)
				}
				return nil
			}
			payload := json.RawMessage(`{"approved":true,"reviewer":"r"}`)
			err = raiser.RaiseEvent(t.Context(), id, "approval", payload, engine.WithIdempotencyKey("k1"))
			r.fstore.BeforeSubmit = nil
			down.Store(false)
			if tc.wantError {
				const want = `raise event "approval" run=` // then: the event is stored, but its wake-up …
				if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "nor left to the repair pass") {
					t.Fatalf("RaiseEvent: %v, want an error: nothing would wake the run", err)
				}
				// The client retries with its key: the event is not stored again, and the run wakes.
				if err := raiser.RaiseEvent(t.Context(), id, "approval", payload, engine.WithIdempotencyKey("k1")); err != nil {
					t.Fatalf("RaiseEvent again: %v", err)
				}
			} else {
				if err != nil {
					t.Fatalf("RaiseEvent: %v", err)
				}
				clk.advance(2 * time.Minute)
				if n, err := r.e.Sweep(t.Context()); err != nil || n != 1 {
					t.Fatalf("repair dispatched %d (err %v), want the woken run: its due row is gone", n, err)
				}
			}
			r.drive(t)
			assertStatus(t, r, id, engine.StatusCompleted)
			if n := countHistory(t, r, id, engine.HistoryEventReceived); n != 1 {
				t.Fatalf("%d events stored for one raise", n)
			}
			assertNoOrphans(t, r, id)
		})
	}
}
