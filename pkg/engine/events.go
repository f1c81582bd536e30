package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// maxHeadRetries bounds the read-modify-write loops of RaiseEvent, CancelRun and StartRun
// against concurrent commits.
const maxHeadRetries = 32

// RaiseEvent implements Runs. It appends the event to the run's inbox (an inbox row and an
// event_received history row, with the head's counters, in one batch conditioned on the
// head) and, when the run waits for exactly this name, dispatches it. Events that arrive
// before the wait, or carry another name, stay in the inbox in arrival order. payload is
// any JSON; empty or invalid means null. Names match case-sensitively.
func (e *Engine) RaiseEvent(ctx context.Context, instanceID, eventName string, payload json.RawMessage) error {
	if len(payload) == 0 || !json.Valid(payload) {
		payload = json.RawMessage("null")
	}
	for range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return runLookupError(err)
		}
		if !h.active() {
			return &RunFinishedError{InstanceID: instanceID, Status: h.status}
		}
		now := e.clock()
		seq := h.inboxSeq + 1
		match := h.waiting == eventName
		headProps := map[string]any{pInboxSeq: seq, pPending: h.pending + 1, pHistSeq: h.histSeq + 1, pUpdated: now}
		if match {
			headProps[pRunnable] = true
		}
		ops := []Op{
			{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: instanceID, RowKey: headRowKey, Properties: headProps}},
			{Kind: OpInsert, Entity: Entity{PartitionKey: instanceID, RowKey: inboxKey(h.gen, seq), Properties: map[string]any{
				pEvent: eventName, pPayload: string(payload), pTime: now, pHistSeq: h.histSeq + 1,
			}}},
		}
		ops = append(ops, historyOps(instanceID, h.gen, h.histSeq, h.step, now, []histRow{{
			typ: HistoryEventReceived, name: eventName, node: h.node,
			data: jsonObject("inbox_seq", itoa(seq), "payload", string(payload)),
		}})...)
		if err := e.spill(ctx, instanceID, h.gen, ops); err != nil {
			return err
		}
		if _, err := e.store.Submit(ctx, ops); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			return fmt.Errorf("raise event %q run=%s: %w", eventName, instanceID, err)
		}
		e.log.Info("event received", "run_id", instanceID, "graph", h.graph, "event", eventName, "wakes", match)
		e.changes.notify()
		if match {
			return e.dispatch(ctx, h, 0)
		}
		return nil
	}
	return fmt.Errorf("raise event %q run=%s: head keeps changing: %w", eventName, instanceID, ErrConflict)
}

// findEvent returns the oldest inbox row of h's generation carrying name.
func (e *Engine) findEvent(ctx context.Context, h *head, name string) (Entity, bool, error) {
	if h.pending <= 0 {
		return Entity{}, false, nil
	}
	from, to := genRange('i', h.gen)
	q := Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to, Where: []Cond{{Property: pEvent, Op: CondEq, Value: name}}, Limit: 1}
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return Entity{}, false, fmt.Errorf("read inbox run=%s: %w", h.runID, err)
		}
		if len(page.Entities) > 0 {
			return page.Entities[0], true, nil
		}
		if page.Continuation == "" {
			return Entity{}, false, nil
		}
		q.Continuation = page.Continuation
	}
}

// CancelRun implements Runs. Cancellation is hard termination, applied durably at once: the
// head becomes Terminated with the reason as output (one batch with a run_terminated history
// row). A step in flight then loses its conditional commit and its result is discarded;
// queued work items are dropped as stale.
func (e *Engine) CancelRun(ctx context.Context, instanceID, reason string) error {
	for range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return runLookupError(err)
		}
		if !h.active() {
			return &RunFinishedError{InstanceID: instanceID, Status: h.status}
		}
		now := e.clock()
		out := jstr(reason)
		ops := []Op{{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: instanceID, RowKey: headRowKey, Properties: map[string]any{
			pStatus: string(StatusTerminated), pOutput: out, pOutput + refSuffix: "", pRunnable: false,
			pStep: h.step + 1, pHistSeq: h.histSeq + 1, pUpdated: now, pWaitDeadline: int64(0), pNotBefore: int64(0),
		}}}}
		ops = append(ops, historyOps(instanceID, h.gen, h.histSeq, h.step+1, now, []histRow{{
			typ: HistoryRunTerminated, name: OrchestratorName, node: h.node, data: jsonObject("reason", out),
		}})...)
		if err := e.spill(ctx, instanceID, h.gen, ops); err != nil {
			return err
		}
		if _, err := e.store.Submit(ctx, ops); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			return fmt.Errorf("cancel run=%s: %w", instanceID, err)
		}
		h.status = StatusTerminated
		e.indexSetStatus(ctx, h)
		e.log.Info("run terminated", "run_id", instanceID, "graph", h.graph, "orchestrator", OrchestratorName)
		e.observeCancelled(ctx, instanceID, h.graph)
		e.changes.notify()
		return nil
	}
	return fmt.Errorf("cancel run=%s: head keeps changing: %w", instanceID, ErrConflict)
}

// runLookupError maps a head read error to the Runs contract (ErrRunNotFound).
func runLookupError(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrRunNotFound
	}
	return err
}
