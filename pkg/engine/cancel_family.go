package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// The cancel of a family, in the background and from storage. A cancel (CancelRun) answers
// once its own run is cancelled; the chain of child runs the run waits for (one child at a
// time, a chain at most MaxChildDepth long) is cancelled after it, one run after the other,
// each from what storage holds:
//
//   - The intent. The cancel of a run that waits for a child first writes a due row of kind
//     "cancel" (repair.go) naming the run, its nonce, the child, and the top of the chain —
//     the run the cancel began at, whose reason every child's names — then the run's batch.
//     The row is written as making room (MakingRoom): a cancel always has room. Once the
//     batch has landed, a work item naming the row goes on the queue. A try whose batch did
//     not land deletes its row; one whose outcome stays unknown leaves it to the repair pass.
//   - The steps (cancelBelow). A worker that takes the item reads the row and the run's head,
//     and cancels the child with the reason "parent run '<run>' was cancelled: <top's
//     reason>" — as making room when the budget refuses it, as any cancel. The child's cancel
//     records the next intent when the child waits for a child of its own; only then is the
//     row above it deleted, and the worker goes on with the next child in-process, one intent
//     stored at a time, so a worker that dies anywhere leaves the intent it was taking. A step
//     that fails below the first, or meets a shutdown, puts its own work item on the queue. A
//     redelivered item finds its row gone, or the child cancelled, and deletes the row.
//   - The end. The step that finds no child left to cancel below (the child waited for none,
//     was gone, or had finished on its own) tells the top's parent of the top's end
//     (notifyParent): a parent that goes on along its failure route then counts what the
//     chain started (chainFamily).
//   - Recovery. A worker that dies, or an item that never reached the queue, leaves the row:
//     the repair pass takes each row RepairAfter old and runs its step itself. A row whose run
//     is still active names a cancel whose batch has not landed: the pass fences the head off
//     (an If-Match merge, as for an event, fence.go), so a late batch fails, and deletes the
//     row; the cancel still trying writes a new one. A row whose run or top is gone (purged:
//     the purge reached the family) or is another run of the id is deleted.
//
// Cost: the intent adds 1 T (the due row) and 1 Q to the cancel of a run that waits for a
// child. Its work item is 1 Q receive and delete and 2 or 3 T reads (the row, the run's head,
// the top's head when it is another run; +1 payload read for a spilled reason); then each run
// of the chain costs its cancel (its own intent included) and 1 T to delete the intent above
// it. The chain's end adds the top's notice to its parent (4 T + 1 Q, child_links.go). Nothing
// scans.

// Due row properties of a cancel's intent: the child to cancel (pChild), and the run the
// cancel began at with its nonce.
const pTop, pTopNonce = "Top", "TopNonce"

// familyCancel is where the cancel of a run stands in its family's cancel: the top of the
// chain, the run the cancel began at ("": the run cancelled is the top).
type familyCancel struct{ top, topNonce string }

// writeCancelDue records, before its cancel's batch, the intent to cancel the child h waits
// for. It makes room: a cancel is never refused for want of it.
func (e *Engine) writeCancelDue(ctx context.Context, h *head, fam *familyCancel) (dueRow, error) {
	top, topNonce := fam.top, fam.topNonce
	if top == "" {
		top, topNonce = h.runID, h.nonce
	}
	return e.writeDueProps(MakingRoom(ctx), h, map[string]any{pRun: h.runID, pNonce: h.nonce, pStep: h.step + 1, pKind: dueCancel,
		pChild: h.waiting, pTop: top, pTopNonce: topNonce})
}

// dispatchCancel puts the step of a cancel's intent (due, written by h's cancel, which
// landed) on the queue. A failed enqueue is left to the repair pass, which finds the row.
func (e *Engine) dispatchCancel(ctx context.Context, h *head, due dueRow) {
	it := itemOf(h)
	it.Step, it.Cancel = h.step+1, due.rowKey
	if err := e.dispatchItem(context.WithoutCancel(ctx), it, 0); err != nil {
		e.log.Warn("cancel child run: dispatch failed; left to the repair pass", "run_id", h.runID, "child_id", h.waiting, "error", err.Error())
	}
}

// cancelItem runs the work item of a cancel's intent: it reads the intent's due row (gone: an
// earlier delivery or the repair pass took the step) and the run's head, and takes the step
// (cancelBelow). An error leaves the item to come back.
func (e *Engine) cancelItem(ctx context.Context, it workItem) error {
	ent, err := e.store.Get(ctx, duePartition(it.RunID), it.Cancel)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("cancel the child of run %s: read its intent: %w", it.RunID, err)
	}
	p, err := e.getHead(ctx, it.RunID)
	switch {
	case errors.Is(err, ErrNotFound):
		p = nil
	case err != nil:
		return fmt.Errorf("cancel the child of run %s: %w", it.RunID, err)
	}
	_, err = e.cancelBelow(ctx, ent, p)
	return err
}

// cancelBelow takes the step of ent, a cancel's intent, p the head of its run (nil: none): it
// cancels the run's child, and goes on down the chain in this process while the child waits
// for a child of its own — each child's cancel records the next intent before its batch, and
// only then is the intent above it deleted — until no run is left to cancel below; then it
// tells the top's parent. A context done on the way hands the next step to the queue. It
// deletes every intent it settles, ent included, and reports whether it settled ent (false: a
// fence that met a change leaves it for the next pass). See the top of the file.
func (e *Engine) cancelBelow(ctx context.Context, ent Entity, p *head) (settled bool, err error) {
	props := ent.Properties
	row := dueRow{partition: ent.PartitionKey, rowKey: ent.RowKey}
	child, top, topNonce := str(props, pChild), str(props, pTop), str(props, pTopNonce)
	switch {
	case p == nil || p.nonce != str(props, pNonce):
		e.clearDue(ctx, row) // purged (the purge reached its family), or another run of the id
		return true, nil
	case p.active():
		return e.fenceCancel(ctx, ent, p)
	case p.status != StatusTerminated || p.awaited() != child:
		e.clearDue(ctx, row) // finished otherwise: its cancel never landed
		return true, nil
	}
	t := p
	if top != p.runID {
		if t, err = e.getHead(ctx, top); errors.Is(err, ErrNotFound) {
			e.clearDue(ctx, row) // purged: its purge reached the family
			return true, nil
		} else if err != nil {
			return false, fmt.Errorf("cancel the child of run %s: read the run its cancel began at: %w", p.runID, err)
		}
	}
	if t.nonce != topNonce || t.status != StatusTerminated {
		e.clearDue(ctx, row)
		return true, nil
	}
	reason, err := e.cancelReason(ctx, t)
	if err != nil {
		return false, fmt.Errorf("cancel the child of run %s: %w", p.runID, err)
	}
	fam := &familyCancel{top: top, topNonce: topNonce}
	stopped := ctx.Err               // ends the walk between two steps
	ctx = context.WithoutCancel(ctx) // a step under way is finished, not cut short
	fail := func(err error) (bool, error) {
		if row.rowKey == ent.RowKey {
			return false, err // ent's item comes back, or the next pass reads ent again
		}
		// A step further down: its own work item takes it up.
		e.log.Warn("cancel child run: left to its own work item", "run_id", p.runID, "child_id", child, "error", err.Error())
		e.dispatchCancel(ctx, p, row)
		return true, nil
	}
	for {
		ch, next, err := e.cancelOne(ctx, child, fmt.Sprintf("parent run '%s' was cancelled: %s", p.runID, reason), p, fam)
		var finished *RunFinishedError
		switch {
		case err == nil && next.rowKey != "": // it waits for a child: the chain goes on from its intent
			e.clearDue(ctx, row)
			if stopped() != nil {
				e.dispatchCancel(ctx, ch, next)
				return true, nil
			}
			p, row, child = ch, next, ch.waiting
			continue
		case err == nil, errors.Is(err, ErrRunNotFound):
			// The chain's end: the child waited for no child, never started (its parent was
			// cancelled before it), is gone, or its id is another run's.
		case errors.As(err, &finished):
			if finished.Status == StatusTerminated {
				// Cancelled already (an earlier delivery of this step, or the repair pass): when it
				// waited for a child, the chain goes on from its own intent, whose end tells the
				// top's parent.
				c, err := e.getHead(ctx, child)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return fail(fmt.Errorf("cancel the child of run %s: %w", p.runID, err))
				}
				if err == nil && c.awaited() != "" {
					e.clearDue(ctx, row)
					return true, nil
				}
			}
		default:
			return fail(fmt.Errorf("cancel child run %s of run %s: %w", child, p.runID, err))
		}
		e.notifyParent(MakingRoom(ctx), t) // the chain is cancelled: the top's parent hears of it
		e.clearDue(ctx, row)
		return true, nil
	}
}

// fenceCancel settles the intent ent of a cancel whose run p is still active: its batch never
// landed, or is late. An If-Match merge on the head read makes a late batch, conditioned on an
// earlier ETag, fail; the cancel, if it still tries, writes a new intent. settled is false when
// the head changed meanwhile: the next pass reads it again.
func (e *Engine) fenceCancel(ctx context.Context, ent Entity, p *head) (bool, error) {
	_, err := e.store.Submit(MakingRoom(ctx), []Op{{Kind: OpMerge, IfMatch: p.etag, Entity: Entity{PartitionKey: p.runID, RowKey: headRowKey,
		Properties: map[string]any{pFence: "cancel " + ent.RowKey}}}})
	switch {
	case err == nil:
		return true, nil
	case refused(err):
		return false, fmt.Errorf("fence cancel of run %s: %w", p.runID, err)
	}
	return false, nil // the head changed (or the outcome is unknown): read it again next pass
}

// cancelReason returns the reason t, a cancelled run, was cancelled with: its output.
func (e *Engine) cancelReason(ctx context.Context, t *head) (string, error) {
	out, err := e.readSpilled(ctx, t.outputJSON, t.outputRef)
	if err != nil {
		return "", fmt.Errorf("read the reason of run %s: %w", t.runID, err)
	}
	var reason string
	if json.Unmarshal([]byte(out), &reason) != nil {
		reason = out
	}
	return reason, nil
}
