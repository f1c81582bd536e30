package engine

import (
	"context"
	"errors"
	"fmt"
)

// CancelRun implements Runs. Cancellation is hard termination, applied durably at once: the
// head becomes Terminated with the reason as output (one batch with a run_terminated history
// row, after an event_not_applied row per event its inbox still holds: unapplied.go). A step in flight then loses its conditional commit and its result is discarded;
// queued work items are dropped as stale. A cancel whose answer is ambiguous is settled by
// reading its run_terminated row: a cancel that landed succeeds. The run's parent and the
// child it waits for hear of it (child_links.go).
func (e *Engine) CancelRun(ctx context.Context, instanceID, reason string) error {
	if !ValidInstanceID(instanceID) {
		return ErrRunNotFound
	}
	var sp spills
	defer func() { e.release(ctx, &sp, nil) }()
	id := newWriteID()
	for range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return runLookupError(err)
		}
		if !h.active() {
			return &RunFinishedError{InstanceID: instanceID, Status: h.status}
		}
		var rows []histRow
		if h.pending > 0 { // the events it never applied (unapplied.go)
			evs, more, err := e.inboxEvents(ctx, h)
			if err != nil {
				return fmt.Errorf("cancel run=%s: %w", instanceID, err)
			}
			rows = notAppliedRows(rows, evs, more, h.node)
		}
		now := e.clock()
		out := jstr(reason)
		rows = append(rows, histRow{typ: HistoryRunTerminated, name: OrchestratorName, node: h.node, data: jsonObject("reason", out)})
		ops := []Op{{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: instanceID, RowKey: headRowKey, Properties: map[string]any{
			pStatus: string(StatusTerminated), pOutput: out, pOutput + refSuffix: "", pRunnable: false,
			pStep: h.step + 1, pHistSeq: h.histSeq + int64(len(rows)), pUpdated: now, pWaitDeadline: int64(0), pNotBefore: int64(0), pWriteID: id,
		}}}}
		ops = historyOps(ops, instanceID, h.gen, h.histSeq, h.step+1, now, id, rows)
		ops = closeRegionOps(ops, h) // outstanding branches do nothing (branch.go)
		if err := e.spill(ctx, instanceID, h.nonce, ops, &sp); err != nil {
			return err
		}
		_, err = e.store.Submit(ctx, ops)
		if err != nil && !refused(err) {
			// Unknown outcome (a conflict included): its run_terminated row says whether
			// this cancel is stored.
			_, landed, rerr := e.resolveWrite(ctx, instanceID, h.gen, h.nonce, h.histSeq+1, id)
			if rerr != nil {
				sp.keep() // the write may have landed
				return fmt.Errorf("cancel run=%s: %w (outcome unknown: %v)", instanceID, err, rerr)
			}
			if landed {
				e.log.Info("cancel stored although its answer was an error", "run_id", instanceID, "error", err.Error())
				err = nil
			}
		}
		switch {
		case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
			continue // another writer changed the head, or removed it: read it again
		case err != nil:
			if !refused(err) {
				sp.keep() // not stored as far as a read can tell; keep its payloads should it land
			}
			return fmt.Errorf("cancel run=%s: %w", instanceID, err)
		}
		e.release(ctx, &sp, ops)
		h.status = StatusTerminated
		e.indexSetStatus(ctx, h)
		e.log.Info("run terminated", "run_id", instanceID, "graph", h.graph, "orchestrator", OrchestratorName)
		e.observeCancelled(ctx, instanceID, h.graph)
		e.changes.notify(instanceID)
		e.cancelled(ctx, h, reason) // its parent and child runs (child_links.go)
		return nil
	}
	return fmt.Errorf("cancel run=%s: head keeps changing: %w", instanceID, ErrConflict)
}
