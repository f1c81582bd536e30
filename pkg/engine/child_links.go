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

// cancelled tells the parent of h, a run just cancelled, of its end, once the runs below it
// are cancelled, so that a parent going on along its failure route counts what they started
// (chainFamily). A run that waited for a child has recorded the intent to cancel it
// (cancelOne): the chain of waits below it is cancelled in the background, one run after the
// other, and the chain's end tells h's parent (cancelBelow, cancel_family.go). A run that
// waited for no child has nothing below it to wait for: its parent hears of it at once. The
// notice is part of the cancel: it has room as the cancel has (MakingRoom).
func (e *Engine) cancelled(ctx context.Context, h *head) {
	if h.childWait() {
		return // its child's cancel goes on; the chain's end tells the parent
	}
	e.notifyParent(MakingRoom(ctx), h)
}

// purgeFamily runs before h, a finished run, is purged: a child its parent still waits for
// is refused (*ChildAwaitedError), and the runs below h are purged first, each one's children
// before it, any still active cancelled first. The walk is depth first, in a loop over a
// stack of the runs on the way down (familyFrame: at most the family's depth, never a
// recursion), each reading its link rows a page at a time. What it purged stays purged: a
// purge cut short (an error, a deadline) leaves the rest of the family to the next purge of
// h, which passes over the children already gone (one read each). It reads nothing for a run
// that is neither a child nor a parent.
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
	stack := []*familyFrame{{h: h}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		ch, err := e.nextChild(ctx, f)
		switch {
		case err != nil:
			return fmt.Errorf("purge run %s: %w", h.runID, err)
		case ch != nil:
			stack = append(stack, &familyFrame{h: ch})
			continue
		}
		stack = stack[:len(stack)-1]
		if f.h == h {
			return nil
		}
		if err := e.purgeRows(ctx, f.h); err != nil && !errors.Is(err, ErrRunNotFound) {
			return fmt.Errorf("purge run %s: purge child run %s: %w", h.runID, f.h.runID, err)
		}
	}
	return nil
}

// familyFrame is a run of a family being purged (purgeFamily), and how far the walk of its
// link rows has come.
type familyFrame struct {
	h    *head
	ids  []string // children read from the link rows and not yet taken
	q    Query
	read bool // the first page is read
}

// familyPage bounds the link rows one query of a family's purge reads (they hold the
// children's inputs).
const familyPage = 100

// nextChild returns the next child of f.h to purge, finished — an active one is cancelled
// first (its own children are then met as the walk goes down) — or nil once none is left. A
// link whose child is gone, or whose id another run holds, is passed over.
func (e *Engine) nextChild(ctx context.Context, f *familyFrame) (*head, error) {
	for {
		if len(f.ids) == 0 {
			if f.h.children == 0 || f.read && f.q.Continuation == "" {
				return nil, nil
			}
			if !f.read {
				from, to := genRange('l', f.h.gen)
				f.q = Query{PartitionKey: f.h.runID, RowKeyFrom: from, RowKeyTo: to, Limit: familyPage}
			}
			page, err := e.store.Query(ctx, f.q)
			if err != nil {
				return nil, fmt.Errorf("list the child runs of run %s: %w", f.h.runID, err)
			}
			f.read, f.q.Continuation = true, page.Continuation
			for _, ent := range page.Entities {
				f.ids = append(f.ids, str(ent.Properties, pChild))
			}
			continue
		}
		id := f.ids[0]
		f.ids = f.ids[1:]
		ch, err := e.getHead(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case ch.parent != f.h.runID || ch.parentNonce != f.h.nonce:
			continue
		case !ch.active():
			return ch, nil
		}
		var finished *RunFinishedError
		_, _, err = e.cancelOne(ctx, id, fmt.Sprintf("parent run '%s' was purged", f.h.runID), f.h, nil) // the walk goes down itself
		if err != nil && !errors.Is(err, ErrRunNotFound) && !errors.As(err, &finished) {
			return nil, fmt.Errorf("cancel child run %s: %w", id, err)
		}
		if ch, err = e.getHead(ctx, id); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		return ch, nil
	}
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
