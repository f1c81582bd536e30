package engine

import (
	"context"
	"errors"
	"fmt"
)

// The family of a child run (child.go): its notice to its parent, and how cancel, purge and a
// status read reach from a run to its parent or its children.

// notifyParent wakes the parent of n, a child run that just finished, while the parent waits
// for it: one batch conditioned on the parent's head marks it runnable and appends a
// child_finished history row, then the parent's work item is enqueued. A parent that no
// longer waits for this child (its recheck read the child first and went on; it finished;
// another run holds its id) gets nothing; one already runnable (an earlier try of this batch
// landed although its answer was lost) gets only the work item. The notice stores nothing in
// the parent's inbox: the parent's wait believes the child's head, never the notice.
//
// A due row written before each try of the batch (an event's, repair.go) makes the repair pass
// dispatch the parent should the enqueue fail or the worker die first, or fence a batch that
// never landed. Best effort beyond that: a parent whose notice is lost reads the child at its
// next recheck. A run without a parent is left alone.
func (e *Engine) notifyParent(ctx context.Context, n *head) {
	if n.parent == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	id := newWriteID() // every try's: a try whose answer was lost is recognised by its row
	data := jsonObject("child_instance_id", jstr(n.runID), "runtime_status", jstr(string(n.status)))
	var due dueRow
	keep := false // the due row stays for the repair pass
	defer func() {
		if !keep {
			e.clearDue(ctx, due)
		}
	}()
	warn := func(msg string, err error) {
		e.log.Warn("notify parent run: "+msg, "run_id", n.runID, "parent_id", n.parent, "error", err.Error())
	}
	for range maxHeadRetries {
		p, err := e.getHead(ctx, n.parent)
		switch {
		case errors.Is(err, ErrNotFound):
			return
		case err != nil:
			keep = true
			warn("read the parent; left to its recheck", err)
			return
		case p.nonce != n.parentNonce || !p.active() || p.waiting != n.runID:
			return // no longer the parent waiting for this child: nothing to wake
		}
		e.clearDue(ctx, due)
		if due, err = e.writeDue(ctx, p, dueEvent); err != nil {
			warn("left to its recheck", err)
			return
		}
		if !p.runnable {
			now := e.clock()
			ops := []Op{{Kind: OpMerge, IfMatch: p.etag, Entity: Entity{PartitionKey: p.runID, RowKey: headRowKey, Properties: map[string]any{
				pRunnable: true, pHistSeq: p.histSeq + 1, pUpdated: now, pWriteID: id,
			}}}}
			ops = historyOps(ops, p.runID, p.gen, p.histSeq, p.step, now, id, []histRow{{typ: HistoryChildFinished, name: OrchestratorName, node: p.node, data: data}})
			_, err = e.store.Submit(ctx, ops)
			if err != nil && !refused(err) {
				// Unknown outcome (a conflict included): its child_finished row says whether it
				// is stored.
				_, landed, rerr := e.resolveWrite(ctx, p.runID, p.gen, p.nonce, p.histSeq+1, id)
				if rerr != nil {
					keep = true
					warn("outcome unknown; left to the repair pass", rerr)
					return
				}
				if landed {
					err = nil
				}
			}
			switch {
			case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
				continue // the head changed: read it again
			case err != nil:
				keep = !refused(err) // not stored, as far as a read can tell: the repair pass fences it
				warn("left to its recheck", err)
				return
			}
			e.changes.notify(p.runID)
		}
		if p.awaitVersion {
			return // parked for its graph version: its parked work item takes the wake-up up
		}
		if err := e.dispatch(ctx, p, 0); err != nil {
			keep = true
			warn("wake-up dispatch failed; left to the repair pass", err)
		}
		return
	}
	warn("left to its recheck", fmt.Errorf("head keeps changing: %w", ErrConflict))
}

// cancelled reaches the family of h, a run just cancelled: its parent hears of it (the
// parent then fails), and the child it waited for is cancelled too. Best effort: a worker
// that dies before the child's cancel leaves the child to run to its end, its notice then
// meeting a finished parent; purging the parent cancels it.
func (e *Engine) cancelled(ctx context.Context, h *head, reason string) {
	e.notifyParent(ctx, h)
	if !h.childWait() {
		return
	}
	err := e.CancelRun(context.WithoutCancel(ctx), h.waiting, fmt.Sprintf("parent run '%s' was cancelled: %s", h.runID, reason))
	var finished *RunFinishedError
	if err != nil && !errors.Is(err, ErrRunNotFound) && !errors.As(err, &finished) {
		e.log.Warn("cancel child run", "run_id", h.runID, "child_id", h.waiting, "error", err.Error())
	}
}

// purgeFamily runs before h, a finished run, is purged: a child its parent still waits for
// is refused (*ChildAwaitedError), and a parent's children are purged first, any still active
// cancelled before. It reads nothing for a run that is neither.
func (e *Engine) purgeFamily(ctx context.Context, h *head) error {
	if h.parent != "" {
		p, err := e.getHead(ctx, h.parent)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return fmt.Errorf("purge run %s: read its parent: %w", h.runID, err)
		case p.nonce == h.parentNonce && p.active() && p.waiting == h.runID:
			return &ChildAwaitedError{InstanceID: h.runID, Status: h.status, ParentInstanceID: h.parent}
		}
	}
	if h.children == 0 {
		return nil
	}
	from, to := genRange('l', h.gen)
	q := Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to}
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("purge run %s: list its child runs: %w", h.runID, err)
		}
		for _, ent := range page.Entities {
			if err := e.purgeChild(ctx, h, str(ent.Properties, pChild)); err != nil {
				return fmt.Errorf("purge run %s: %w", h.runID, err)
			}
		}
		if page.Continuation == "" {
			return nil
		}
		q.Continuation = page.Continuation
	}
}

// purgeChild purges child id of h (cancelling it first while active); a run of that id that
// is not h's child, or none, is left alone.
func (e *Engine) purgeChild(ctx context.Context, h *head, id string) error {
	ch, err := e.getHead(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	case ch.parent != h.runID || ch.parentNonce != h.nonce:
		return nil
	}
	var finished *RunFinishedError
	if ch.active() {
		err := e.CancelRun(ctx, id, fmt.Sprintf("parent run '%s' was purged", h.runID))
		if err != nil && !errors.Is(err, ErrRunNotFound) && !errors.As(err, &finished) {
			return fmt.Errorf("cancel child run %s: %w", id, err)
		}
	}
	if err := e.PurgeRun(ctx, id); err != nil && !errors.Is(err, ErrRunNotFound) {
		return fmt.Errorf("purge child run %s: %w", id, err)
	}
	return nil
}

// withChildren adds to r, the status of h, the ids of the first MaxListedChildren child runs
// h started (one query of its link rows).
func (e *Engine) withChildren(ctx context.Context, h *head, r Run) (Run, error) {
	from, to := genRange('l', h.gen)
	page, err := e.store.Query(ctx, Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to, Limit: MaxListedChildren})
	if err != nil {
		return Run{}, fmt.Errorf("list child runs of run %s: %w", h.runID, err)
	}
	r.ChildInstanceIDs = make([]string, 0, len(page.Entities))
	for _, ent := range page.Entities {
		r.ChildInstanceIDs = append(r.ChildInstanceIDs, str(ent.Properties, pChild))
	}
	return r, nil
}
