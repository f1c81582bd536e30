package engine

import (
	"context"
	"errors"
	"fmt"
)

// PurgeRun implements Runs: it deletes a finished run's rows and payloads. The rows go
// first, while the head still stands (a start of the id meanwhile replaces the head with a
// later generation, whose rows it leaves alone, and the purge then fails on the head's
// ETag); the head next; the payloads last, by the run's nonce, so a new run of the id that
// started after the head was deleted keeps its own. A head delete whose answer is ambiguous
// (a 404 from the retry of a delete that landed) is settled by reading the head: gone means
// purged. A run's child runs are purged first (child_links.go). Errors: ErrRunNotFound,
// *RunNotFinishedError, *ChildAwaitedError for a child run its parent still waits for.
func (e *Engine) PurgeRun(ctx context.Context, instanceID string) error {
	if !ValidInstanceID(instanceID) {
		return ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return runLookupError(err)
	}
	if !h.status.Finished() {
		return &RunNotFinishedError{InstanceID: instanceID, Status: h.status}
	}
	if err := e.purgeFamily(ctx, h); err != nil { // its child runs first (child_links.go)
		return err
	}
	return e.purgeRows(ctx, h)
}

// purgeRows deletes the rows and payloads of h, a finished run, as PurgeRun does once its
// family is purged. Errors: *RunNotFinishedError (h is not finished, or its id was started
// again meanwhile).
func (e *Engine) purgeRows(ctx context.Context, h *head) error {
	instanceID := h.runID
	if !h.status.Finished() {
		return &RunNotFinishedError{InstanceID: instanceID, Status: h.status}
	}
	if err := e.deleteRows(ctx, instanceID, h.gen+1); err != nil {
		return fmt.Errorf("purge run %s: %w", instanceID, err)
	}
	if err := e.deleteClaim(ctx, instanceID, h.nonce); err != nil {
		return fmt.Errorf("purge run %s: %w", instanceID, err)
	}
	_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: h.etag, Entity: Entity{PartitionKey: instanceID, RowKey: headRowKey}}})
	if err != nil && !refused(err) {
		// Unknown outcome (a 404 or 412 included: the answer to a retry of a delete that
		// landed): the head says.
		if err = e.resolvePurge(ctx, h, err); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("purge run %s: %w", instanceID, err)
	}
	if _, err := e.payloads.DeletePrefix(ctx, payloadPrefix(instanceID, h.nonce)); err != nil {
		return fmt.Errorf("purge payloads of run %s: %w", instanceID, err)
	}
	if err := e.deleteLive(ctx, instanceID, h.nonce); err != nil {
		return fmt.Errorf("purge the live channel of run %s: %w", instanceID, err)
	}
	if err := e.indexDelete(ctx, h.indexRef()); err != nil {
		return fmt.Errorf("purge run %s: %w", instanceID, err)
	}
	e.unindexFailure(ctx, h) // its row in the failure index, if it failed (rewind_index.go)
	e.log.Info("run purged", "run_id", instanceID)
	return nil
}

// resolvePurge decides a head delete of h that failed with err, not a definite rejection,
// by reading the head: gone, or replaced by a run that started from generation 1 again
// (which needs the head gone first), means the purge is done (nil); replaced by a later
// generation means a start got there first (*RunNotFinishedError); the same run still there
// means the delete did not land (err, wrapped).
func (e *Engine) resolvePurge(ctx context.Context, h *head, err error) error {
	fresh, gerr := e.getHead(ctx, h.runID)
	switch {
	case errors.Is(gerr, ErrNotFound):
		return nil
	case gerr != nil:
		return fmt.Errorf("purge run %s: %w (outcome unknown: %v)", h.runID, err, gerr)
	case fresh.nonce == h.nonce:
		return fmt.Errorf("purge run %s: %w", h.runID, err)
	case fresh.gen > h.gen: // restarted meanwhile
		return &RunNotFinishedError{InstanceID: h.runID, Status: fresh.status}
	}
	return nil
}

// cleanupGenerations deletes the rows of generations before h's and the payloads of the run
// h replaced (nonce oldNonce). It first checks that h is still the run of the id: after a
// purge a new run starts again at generation 1, and a late cleanup must not delete its rows.
// It returns the payload deletion's error, for the start to leave that to the repair pass
// (its due row names oldNonce); a failure to delete rows is logged, and PurgeRun removes
// leftover rows.
func (e *Engine) cleanupGenerations(ctx context.Context, h *head, oldNonce string) error {
	_, perr := e.payloads.DeletePrefix(ctx, payloadPrefix(h.runID, oldNonce))
	if err := e.deleteLive(ctx, h.runID, oldNonce); err != nil && perr == nil {
		perr = err
	}
	if cur, err := e.getHead(ctx, h.runID); err != nil || cur.nonce != h.nonce {
		return perr
	}
	if err := e.deleteRows(ctx, h.runID, h.gen); err != nil {
		e.log.Warn("clean up replaced run", "run_id", h.runID, "error", err.Error())
	}
	if err := e.deleteClaim(ctx, h.runID, oldNonce); err != nil {
		e.log.Warn("clean up replaced run", "run_id", h.runID, "error", err.Error())
	}
	return perr
}

// deleteClaim deletes the claim row of a run's own start (fence.go). A fence claim (of a start
// that never stored its head) is never deleted: it keeps that start's late batch failing.
func (e *Engine) deleteClaim(ctx context.Context, runID, nonce string) error {
	_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: runID, RowKey: claimKey(nonce)}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete claim: %w", err)
	}
	return nil
}

// deleteRows deletes the history and inbox rows of generations below gen, in batches, each
// row with If-Match on the ETag it was listed with: a batch that reaches the store late —
// after the id was purged and started again, its generations counted from 1 again — fails on
// the new run's rows instead of deleting them. A batch that fails (a row deleted or written
// meanwhile, the retry of a batch whose first try landed, an unknown outcome) deleted all or
// nothing: the rows are listed again and what is left is deleted, a few passes at most.
func (e *Engine) deleteRows(ctx context.Context, runID string, gen int64) error {
	const passes = 4
	for pass := 1; ; pass++ {
		rows, err := e.rowsBelow(ctx, runID, gen)
		if err != nil {
			return err
		}
		var failed error
		for len(rows) > 0 {
			n := min(len(rows), maxBatchOps)
			ops := make([]Op, n)
			for i, row := range rows[:n] {
				ifMatch := row.ETag
				if ifMatch == "" {
					ifMatch = ETagAny
				}
				ops[i] = Op{Kind: OpDelete, IfMatch: ifMatch, Entity: Entity{PartitionKey: runID, RowKey: row.RowKey}}
			}
			if _, err := e.store.Submit(ctx, ops); err != nil {
				if refused(err) {
					return err
				}
				failed = err
			}
			rows = rows[n:]
		}
		if failed == nil {
			return nil
		}
		if pass == passes {
			return fmt.Errorf("delete rows below generation %d: %w", gen, failed)
		}
	}
}

// rowsBelow lists the keys and ETags of the history, inbox and dedup rows of generations below
// gen (not the claim rows, fence.go).
func (e *Engine) rowsBelow(ctx context.Context, runID string, gen int64) ([]Entity, error) {
	q := Query{PartitionKey: runID, RowKeyFrom: "h", RowKeyTo: headRowKey}
	var rows []Entity
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, ent := range page.Entities {
			if ent.RowKey[0] != 'n' && keyGen(ent.RowKey) < gen { // claims: deleteClaim
				rows = append(rows, Entity{RowKey: ent.RowKey, ETag: ent.ETag})
			}
		}
		if page.Continuation == "" {
			return rows, nil
		}
		q.Continuation = page.Continuation
	}
}

// deleteLive deletes the live channel of the run of nonce (live.go), if the engine has one.
func (e *Engine) deleteLive(ctx context.Context, runID, nonce string) error {
	if e.live == nil {
		return nil
	}
	_, err := e.live.DeletePrefix(ctx, payloadPrefix(runID, nonce))
	return err
}
