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
// reading its run_terminated row: a cancel that landed succeeds.
//
// The family goes on in the background, from storage (cancel_family.go): a run that waits for a
// child records the intent to cancel it (a due row) before its batch, and once the batch has
// landed puts a work item on the queue that cancels the child, whose own cancel records the
// next intent, and so on down the chain of waits, one intent stored at a time; the repair pass
// finishes a chain whose worker died. So CancelRun answers after a bounded number of storage
// calls, whatever the family's depth, and a process killed right after the answer still has the
// family cancelled. The run's parent hears of the cancel once the chain below it is cancelled:
// at once for a run that waits for no child, else from the chain's end (child_links.go).
//
// A cancel always has room: one that a store with a budget refuses for want of it
// (ErrStorageFull) is written again marked as making room (MakingRoom), which such a store
// never refuses, with its reason cut to maxRoomReason bytes, so a full store can always be
// freed and the cancel adds little to it. A purge deletes, which is never refused.
func (e *Engine) CancelRun(ctx context.Context, instanceID, reason string) error {
	h, due, err := e.cancelOne(ctx, instanceID, reason, nil, &familyCancel{})
	if err != nil {
		return err
	}
	if due.rowKey != "" {
		e.dispatchCancel(ctx, h, due) // its child's cancel, in the background (cancel_family.go)
	}
	e.cancelled(ctx, h) // its parent, unless its child's cancel goes on (child_links.go)
	return nil
}

// cancelOne cancels run instanceID alone, as CancelRun does, and returns its head as it was
// before the cancel but for its status. With parent, a run of that id that is not parent's
// child is not cancelled (ErrRunNotFound). With fam, a run that waits for a child records the
// intent to cancel it before its batch (cancel_family.go) and returns it (due; zero: none), for
// the caller to carry on; without, the caller reaches the family itself (a purge).
func (e *Engine) cancelOne(ctx context.Context, instanceID, reason string, parent *head, fam *familyCancel) (_ *head, due dueRow, _ error) {
	if !ValidInstanceID(instanceID) {
		return nil, dueRow{}, ErrRunNotFound
	}
	var sp spills
	defer func() { e.release(ctx, &sp, nil) }()
	id := newWriteID()
	for range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return nil, dueRow{}, runLookupError(err)
		}
		if parent != nil && (h.parent != parent.runID || h.parentNonce != parent.nonce) {
			return nil, dueRow{}, ErrRunNotFound
		}
		if !h.active() {
			return nil, dueRow{}, &RunFinishedError{InstanceID: instanceID, Status: h.status}
		}
		due = dueRow{} // the intent to cancel h's child, written before the batch
		if fam != nil && h.childWait() {
			if due, err = e.writeCancelDue(ctx, h, fam); err != nil {
				return nil, dueRow{}, fmt.Errorf("cancel run=%s: %w", instanceID, err)
			}
		}
		var rows []histRow
		if h.pending > 0 { // the events it never applied (unapplied.go)
			evs, more, err := e.inboxEvents(ctx, h)
			if err != nil {
				e.clearDue(ctx, due)
				return nil, dueRow{}, fmt.Errorf("cancel run=%s: %w", instanceID, err)
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
		err = e.spill(ctx, instanceID, h.nonce, ops, &sp)
		if err == nil {
			_, err = e.store.Submit(ctx, ops)
		} else if !errors.Is(err, ErrStorageFull) {
			e.clearDue(ctx, due)
			return nil, dueRow{}, err
		}
		if errors.Is(err, ErrStorageFull) && !IsMakingRoom(ctx) {
			e.clearDue(ctx, due)
			e.release(ctx, &sp, nil)
			e.log.Warn("cancel refused for want of room: written again as making room", "run_id", instanceID)
			ctx, reason = MakingRoom(ctx), cutReason(reason)
			continue
		}
		if err != nil && !refused(err) {
			// Unknown outcome (a conflict included): its run_terminated row says whether
			// this cancel is stored.
			_, landed, rerr := e.resolveWrite(ctx, instanceID, h.gen, h.nonce, h.histSeq+1, id)
			if rerr != nil {
				sp.keep() // the write may have landed; so may the intent: its due row stays for the repair pass
				return nil, dueRow{}, fmt.Errorf("cancel run=%s: %w (outcome unknown: %v)", instanceID, err, rerr)
			}
			if landed {
				e.log.Info("cancel stored although its answer was an error", "run_id", instanceID, "error", err.Error())
				err = nil
			}
		}
		if err != nil {
			e.clearDue(ctx, due) // not stored, as far as a read can tell
		}
		switch {
		case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
			continue // another writer changed the head, or removed it: read it again
		case err != nil:
			if !refused(err) {
				sp.keep() // not stored as far as a read can tell; keep its payloads should it land
			}
			return nil, dueRow{}, fmt.Errorf("cancel run=%s: %w", instanceID, err)
		}
		e.release(ctx, &sp, ops)
		h.status = StatusTerminated
		e.indexSetStatus(MakingRoom(ctx), h) // a status merged, the active rows deleted: it frees room
		e.log.Info("run terminated", "run_id", instanceID, "graph", h.graph, "orchestrator", OrchestratorName)
		e.observeCancelled(ctx, instanceID, h.graph)
		e.changes.notify(instanceID)
		return h, due, nil
	}
	return nil, dueRow{}, fmt.Errorf("cancel run=%s: head keeps changing: %w", instanceID, ErrConflict)
}

// maxRoomReason bounds, in bytes, the reason a cancel stores when it is written as making room.
const maxRoomReason = 256

// cutReason returns reason cut to maxRoomReason bytes at a character boundary, "…" marking a cut.
func cutReason(reason string) string {
	if len(reason) <= maxRoomReason {
		return reason
	}
	return cutAtRune(reason, maxRoomReason-len("…")) + "…"
}
