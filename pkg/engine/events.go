package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ErrInvalidEventPayload reports a non-empty event payload that is not valid JSON.
var ErrInvalidEventPayload = errors.New("engine: event payload must be valid JSON")

// EventOption is a per-call option of RaiseEvent.
type EventOption func(*eventOptions)

type eventOptions struct {
	key string
}

// WithIdempotencyKey makes RaiseEvent store the event at most once per key and run: a retry
// with the same key (a client that lost the 202) is accepted again without storing a second
// event. Keys are compared exactly; "" means no key.
func WithIdempotencyKey(key string) EventOption {
	return func(o *eventOptions) { o.key = key }
}

// dedupKey is the row key that records an idempotency key of generation gen.
func dedupKey(gen int64, key string) string {
	sum := sha256.Sum256([]byte(key))
	return seqKey('k', gen, 0)[:8] + hex.EncodeToString(sum[:16])
}

// RaiseEvent implements Runs. It appends the event to the run's inbox (an inbox row and an
// event_received history row, with the head's counters, in one batch conditioned on the
// head) and, when the run waits for exactly this name, dispatches it. Events that arrive
// before the wait, or carry another name, stay in the inbox in arrival order. payload is
// any JSON; empty means null. Names match case-sensitively.
//
// One call stores the event at most once, with or without a key: a batch whose answer is
// ambiguous (a lost reply the SDK retried into a conflict with itself) is settled by reading
// the event_received row it would have written, stamped with this call's write id.
//
// Once the batch is stored the event is accepted (nil): should the wake-up enqueue fail,
// it is logged and Sweep dispatches the run (a due row says so: written before the batch, or
// again once the batch is stored when the row may have been settled by the repair pass
// meanwhile). Only when that row cannot be written either does the raise of a stored event
// return an error: nothing else would wake the run. A retry with the same idempotency key
// then enqueues the wake-up without storing the event again.
// The event is checked against the run's graph version before it is stored: a name the
// version has no handler for is an *UnknownEventError, a payload its typed handler refuses a
// *durable.EventPayloadError (see graphrun.EventChecker; unknown keys are not refused). A
// process that does not have the run's version cannot check it and stores nothing: a
// *VersionUnavailableError, to be sent again (during a rolling deploy, to an instance that
// has the version). The events of an internal graph (durable.Registry.RegisterInternal),
// which the app raises itself, are stored unchecked there. An event stored all the same without its check (by a process whose registration of the version checks no event) is
// checked when the run's wait takes it up: one that fails is consumed and recorded as
// refused (HistoryEventRefused), and the run keeps waiting.
//
// A run parked for its graph version (version.go) is not woken by the event: the parked work
// item that comes back with a back-off takes it up, so events do not multiply its items.
//
// Errors: ErrRunNotFound, ErrInvalidEventName (checked before anything is read or stored),
// *RunFinishedError, *UnknownEventError, *durable.EventPayloadError, ErrInvalidEventPayload,
// *VersionUnavailableError.
func (e *Engine) RaiseEvent(ctx context.Context, instanceID, eventName string, payload json.RawMessage, opts ...EventOption) error {
	if !ValidInstanceID(instanceID) {
		return ErrRunNotFound
	}
	if !ValidEventName(eventName) {
		return ErrInvalidEventName
	}
	if payload = bytes.TrimSpace(payload); len(payload) == 0 {
		payload = json.RawMessage("null")
	} else if !json.Valid(payload) {
		return ErrInvalidEventPayload
	}
	var o eventOptions
	for _, opt := range opts {
		opt(&o)
	}
	var (
		due dueRow
		// dueAttempt is the attempt that wrote due, after its head read: due is sure to be
		// there for that attempt's batch only (see wakeOrRecord).
		dueAttempt int
		sp         spills
		id         = newWriteID() // this request's event, recognised if its answer is lost
	)
	defer func() { e.release(ctx, &sp, nil) }()
	for attempt := range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return runLookupError(err)
		}
		if o.key != "" && attempt == 0 {
			if _, err := e.store.Get(ctx, instanceID, dedupKey(h.gen, o.key)); err == nil {
				// Stored by an earlier call with this key. That call may have answered an error
				// because it could not wake the run (wakeOrRecord): while the run waits for the
				// event unwoken, this one enqueues the wake-up (a second item for one step is
				// dropped). Should that fail, the earlier call's due row, if it answered
				// success, still stands.
				if h.waiting == eventName && h.runnable && !h.awaitVersion && h.active() {
					if err := e.dispatch(ctx, h, 0); err != nil {
						e.log.Warn("raise event again: wake-up dispatch failed", "run_id", instanceID, "event", eventName, "error", err.Error())
					}
				}
				return nil
			} else if !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("raise event %q run=%s: %w", eventName, instanceID, err)
			}
		}
		if !h.active() {
			return &RunFinishedError{InstanceID: instanceID, Status: h.status}
		}
		if attempt == 0 {
			if err := e.checkEvent(h, eventName, payload); err != nil {
				return err
			}
		}
		now := e.clock()
		seq := h.inboxSeq + 1
		match := h.waiting == eventName
		if match && (due.rowKey == "" || due.step != h.step) {
			e.clearDue(ctx, due)
			dueAttempt = attempt
			if due, err = e.writeDue(ctx, h, dueEvent); err != nil {
				return fmt.Errorf("raise event %q run=%s: %w", eventName, instanceID, err)
			}
		}
		headProps := map[string]any{pInboxSeq: seq, pPending: h.pending + 1, pHistSeq: h.histSeq + 1, pUpdated: now, pWriteID: id}
		if match {
			headProps[pRunnable] = true
		}
		ops := []Op{
			{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: instanceID, RowKey: headRowKey, Properties: headProps}},
			{Kind: OpInsert, Entity: Entity{PartitionKey: instanceID, RowKey: inboxKey(h.gen, seq), Properties: map[string]any{
				pEvent: eventName, pPayload: string(payload), pTime: now, pHistSeq: h.histSeq + 1, pWriteID: id,
			}}},
		}
		ops = historyOps(ops, instanceID, h.gen, h.histSeq, h.step, now, id, []histRow{{
			typ: HistoryEventReceived, name: eventName, node: h.node,
			data: jsonObject("inbox_seq", itoa(seq), "payload", string(payload)),
		}})
		dedupAt := -1
		if o.key != "" {
			dedupAt = len(ops)
			ops = append(ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: instanceID, RowKey: dedupKey(h.gen, o.key),
				Properties: map[string]any{pEvent: eventName, pTime: now, pWriteID: id}}})
		}
		if err := e.spill(ctx, instanceID, h.nonce, ops, &sp); err != nil {
			return err
		}
		_, err = e.store.Submit(ctx, ops)
		if err != nil && !refused(err) {
			// Unknown outcome (a conflict included): its event_received row says whether
			// this request's event is stored.
			_, landed, rerr := e.resolveWrite(ctx, instanceID, h.gen, h.nonce, h.histSeq+1, id)
			if rerr != nil {
				sp.keep() // the batch may have landed: keep its payloads, and its due row for Sweep
				return fmt.Errorf("raise event %q run=%s: %w (outcome unknown: %v)", eventName, instanceID, err, rerr)
			}
			if landed {
				e.log.Info("event stored although its answer was an error", "run_id", instanceID, "event", eventName, "error", err.Error())
				err = nil
			}
		}
		var be *BatchError
		switch {
		case errors.Is(err, ErrConflict) && errors.As(err, &be) && be.Index == dedupAt:
			e.clearDue(ctx, due)
			return nil // a concurrent call with this key stored it
		case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
			// Another writer changed the head, or removed it: read it again. The due row is
			// kept for the retry, so writers contending for the head do not each add a delete
			// and an insert per attempt; whether it is still there by then, only the store can
			// tell (that writer may be the repair pass fencing this late batch, which then
			// deletes the row), so a retry that stores the event and cannot enqueue its
			// wake-up records a new one (wakeOrRecord).
			continue
		case err != nil:
			if !refused(err) {
				// Not stored, as far as a read can tell; keep its payloads and due row
				// should it land all the same.
				sp.keep()
			}
			return fmt.Errorf("raise event %q run=%s: %w", eventName, instanceID, err)
		}
		e.release(ctx, &sp, ops)
		e.log.Info("event received", "run_id", instanceID, "graph", h.graph, "event", eventName, "wakes", match && !h.awaitVersion)
		e.changes.notify(instanceID)
		if !match || h.awaitVersion {
			// Not waited for (the due row was written by an attempt that saw the wait), or the
			// run is parked: its parked item, already on the queue, takes the event up.
			e.clearDue(ctx, due)
			return nil
		}
		return e.wakeOrRecord(ctx, h, eventName, due, dueAttempt == attempt)
	}
	e.clearDue(ctx, due)
	return fmt.Errorf("raise event %q run=%s: head keeps changing: %w", eventName, instanceID, ErrConflict)
}

// wakeOrRecord wakes h's run for the event eventName its raise has just stored: it enqueues
// the run's work item and deletes the due row due. When the enqueue fails, the event is
// accepted all the same as long as a due row makes the repair pass dispatch the run. due
// serves if it was written after the head read the stored batch was conditioned on (fresh):
// the pass deletes an event's due row only after fencing the head with an If-Match merge, and
// a fence after that read would have failed the batch. A due row written by an earlier
// attempt may be gone — a pass may have fenced that attempt's late batch and deleted it —
// and no clock can tell: a new due row is written, after the event was stored, so the pass
// that meets it finds the run runnable and dispatches it. When that write fails too, nothing
// will wake the run, and the raise returns an error although the event is stored.
func (e *Engine) wakeOrRecord(ctx context.Context, h *head, eventName string, due dueRow, fresh bool) error {
	err := e.dispatch(ctx, h, 0)
	if err == nil {
		e.clearDue(ctx, due)
		return nil
	}
	if !fresh {
		if _, werr := e.writeDue(ctx, h, dueEvent); werr != nil {
			// The old row, should it still be there, is kept: it may yet wake the run.
			return fmt.Errorf("raise event %q run=%s: the event is stored, but its wake-up could not be enqueued (%v) nor left to the repair pass: %w",
				eventName, h.runID, err, werr)
		}
		e.clearDue(ctx, due)
	}
	// Accepted all the same: the due row makes Sweep dispatch the run.
	e.log.Warn("raise event: wake-up dispatch failed; left to the repair pass", "run_id", h.runID, "event", eventName, "error", err.Error())
	return nil
}

// UnknownEventError is an event raised on a run whose graph version has no handler for it.
// It wraps durable.ErrUnknownEvent.
type UnknownEventError struct {
	// Event is the event name.
	Event string
	// Graph is the run's graph name.
	Graph string
}

// Error names the graph and the event it has no handler for.
func (e *UnknownEventError) Error() string {
	return fmt.Sprintf("graph '%s' has no handler for event '%s'", e.Graph, e.Event)
}

// Unwrap returns durable.ErrUnknownEvent.
func (e *UnknownEventError) Unwrap() error { return durable.ErrUnknownEvent }

// VersionUnavailableError is an event raised on a run whose graph version is not registered
// on this process: nothing here can check it, so nothing is stored. A process that has the
// version accepts it; the client sends it again.
type VersionUnavailableError struct {
	// Graph, Version and Hash name the run's graph version.
	Graph, Version, Hash string
}

// Error names the version and says to retry.
func (e *VersionUnavailableError) Error() string {
	return fmt.Sprintf("graph '%s' version '%s' (graph_hash '%s') is not registered on this instance, which cannot check the event: retry later",
		e.Graph, e.Version, e.Hash)
}

// checkEvent checks an event against the registration of the run's graph version. Errors:
// *VersionUnavailableError when this process does not have it (but for a graph registered
// here as internal, whose events the app raises itself: accepted, and checked when applied),
// *UnknownEventError, *durable.EventPayloadError.
func (e *Engine) checkEvent(h *head, event string, payload json.RawMessage) error {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		if e.reg.Internal(h.graph) {
			return nil // the app's own events (durable.Registry.RegisterInternal): checked when applied
		}
		return &VersionUnavailableError{Graph: h.graph, Version: h.version, Hash: h.hash}
	}
	return checkGraphEvent(g, h, event, payload)
}

// checkGraphEvent checks an event against g, the graph of h's run. Errors: *UnknownEventError,
// *durable.EventPayloadError.
func checkGraphEvent(g durable.Graph, h *head, event string, payload json.RawMessage) error {
	var err error
	if c, ok := graphrun.Of(g).(graphrun.EventChecker); ok {
		err = c.CheckEvent(event, payload)
	} else if !slices.Contains(g.Manifest().EventHandlerNames, event) {
		err = durable.ErrUnknownEvent
	}
	if errors.Is(err, durable.ErrUnknownEvent) {
		return &UnknownEventError{Event: event, Graph: h.graph}
	}
	return err
}
