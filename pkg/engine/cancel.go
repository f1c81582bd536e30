package engine

import (
	"context"
	"errors"
	"fmt"
)

// CancelRun implements Runs. Cancellation is hard termination, applied durably at once: the
// head becomes Terminated with the reason as output (one batch with a run_terminated history
// row). A step in flight then loses its conditional commit and its result is discarded;
// queued work items are dropped as stale.
func (e *Engine) CancelRun(ctx context.Context, instanceID, reason string) error {
	if !ValidInstanceID(instanceID) {
		return ErrRunNotFound
	}
	var sp spills
	defer func() { e.release(ctx, &sp, nil) }()
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
		if err := e.spill(ctx, instanceID, h.nonce, ops, &sp); err != nil {
			return err
		}
		if _, err := e.store.Submit(ctx, ops); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			if !rejected(err) {
				sp.keep() // the write may have landed
			}
			return fmt.Errorf("cancel run=%s: %w", instanceID, err)
		}
		e.release(ctx, &sp, ops)
		h.status = StatusTerminated
		e.indexSetStatus(ctx, h)
		e.log.Info("run terminated", "run_id", instanceID, "graph", h.graph, "orchestrator", OrchestratorName)
		e.observeCancelled(ctx, instanceID, h.graph)
		e.changes.notify()
		return nil
	}
	return fmt.Errorf("cancel run=%s: head keeps changing: %w", instanceID, ErrConflict)
}
