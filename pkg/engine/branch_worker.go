package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// A fan-out's branch workers (see branch.go for the scheme): run one branch's node, commit its
// completion row without touching the run's head, and enqueue the join when it is due.

// branchWork is the queue message of one branch of a fan-out: its run's work item (the
// fan-out's step) plus, in the JSON, "br":<index>, "ba":<attempt> (the failed attempts when
// it was sent: a retry's message; omitted when 0), "bn":"<node>", "bi":<item> (omitted when
// none) and "bs":1 (sent again by a put-back or a rescue; omitted otherwise).
// decodeWorkItem (workitem_codec.go) reads it. The message only wakes the branch: its
// progress row decides which attempt runs, and when (branch_progress.go).
type branchWork struct {
	workItem
	Index   int64
	Attempt int64
	Node    string
	Item    rawJSON
	Resent  bool
}

// encodeBranchWork returns the JSON of bw.
func encodeBranchWork(bw branchWork) []byte {
	b := appendWorkItem(make([]byte, 0, 128+len(bw.RunID)+len(bw.Node)+len(bw.Item)), bw.workItem)
	b = append(b, `,"br":`...)
	b = append(b, itoa(bw.Index)...)
	if bw.Attempt > 0 {
		b = append(b, `,"ba":`...)
		b = append(b, itoa(bw.Attempt)...)
	}
	b = append(b, `,"bn":`...)
	b = appendJSONString(b, bw.Node)
	if len(bw.Item) > 0 {
		b = append(b, `,"bi":`...)
		b = append(b, bw.Item...)
	}
	if bw.Resent {
		b = append(b, `,"bs":1`...)
	}
	return append(b, '}')
}

// dispatchBranch enqueues bw after delay.
func (e *Engine) dispatchBranch(ctx context.Context, bw branchWork, delay time.Duration) error {
	return e.enqueue(ctx, encodeBranchWork(bw), bw.workItem, delay)
}

// ref is the branch bw runs.
func (bw *branchWork) ref() branchRef {
	return branchRef{index: bw.Index, node: bw.Node, item: json.RawMessage(bw.Item)}
}

// processBranch runs a branch's work item: check the run still waits for this branch, settle
// a redelivery whose branch committed, begin the attempt its progress names (back to the
// queue while it backs off; failed past the kill limit; a hold taken when it may be a
// restart), run its node, then commit its completion row and enqueue the join once every
// branch is there — or, for a handler error under the retry policy, record the failed
// attempt and enqueue the next after its back-off.
func (e *Engine) processBranch(ctx context.Context, it branchWork, dequeueCount int64) error {
	h, ok, err := e.branchHead(ctx, it)
	if err != nil || !ok {
		return err
	}
	sc, err := e.stepCtxOf(h)
	if err != nil {
		return e.awaitBranchVersion(ctx, h, it) // not this process's version: no user code
	}
	b := it.ref()
	redelivered := dequeueCount > 1 || it.Retry > 0
	if redelivered || it.Attempt > 0 || it.Resent {
		// Not the fan-out's first message: the branch may have committed before it came.
		if _, err := e.store.Get(ctx, h.runID, histKey(h.gen, h.slotSeq(b.index))); err == nil {
			return e.afterBranch(ctx, h, b.index)
		} else if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("read branch %d of run %s: %w", b.index, h.runID, err)
		}
	}
	if h.carryBase != 0 { // a rewound region: a branch that completed before is carried (rewind_branch.go)
		if carried, err := e.carryBranch(ctx, h, b); carried || err != nil {
			return err
		}
	}
	p, err := e.readProgress(ctx, h, b.index) // whatever the message says, the row decides
	if err != nil {
		return err
	}
	st, err := e.beginBranch(ctx, h, b.index, p, it, redelivered)
	switch {
	case err != nil:
		return err // storage errors never count towards poison
	case st.wait > 0:
		next := branchItem(h, b, st.progress.attempt)
		next.Trace = it.Trace
		return e.dispatchBranch(context.WithoutCancel(ctx), next, st.wait)
	case st.starts > 0:
		return e.failBranchPoison(ctx, h, b, st)
	}
	if st.hold != nil {
		defer e.holds.abandon(st.hold.id) // a handling taken down mid-branch is a death: its lease judges it
	}
	settled, err := e.runBranch(ctx, sc, h, it, st)
	if st.hold != nil && !settled {
		e.releaseBranchHold(ctx, h, b.index, st.hold, err) // an error return is not a death
	} else if st.hold != nil {
		e.holds.finish(st.hold.id, true)
	}
	return err
}

// runBranch runs one attempt of it's branch under st and settles it: its completion row, or
// its next attempt recorded and enqueued. It reports whether the attempt was settled (its
// hold no longer matters); false with an error for a handling that failed, to be redelivered.
func (e *Engine) runBranch(ctx context.Context, sc *stepCtx, h *head, it branchWork, st branchStart) (bool, error) {
	b, p := it.ref(), st.progress
	state, err := e.loadState(ctx, h)
	if err != nil {
		return false, err
	}
	info := stepInfo(h)
	info.Attempt, info.Branch = st.attempt(), int(b.index)+1
	bctx, emitter := graphrun.WithEmitter(graphrun.WithBranch(graphrun.WithStepInfo(ctx, info),
		durable.BranchInfo{Index: int(b.index), Count: int(h.branchCount), Node: b.node, Item: b.item}))
	// The branch's live writes (live.go): final once its completion row is stored, retracted
	// otherwise (a retry, a failure, a region closed meanwhile, a handling that failed).
	var data string
	failed, committed := false, false
	lw := e.newLiveWriter(h, h.step+1, st.attempt(), b.node, int(b.index), st.attempt() > 1)
	if lw != nil {
		emitter.SetLive(lw)
		defer func() {
			lw.close(ctx)
			if committed && !failed {
				lw.end(ctx, LiveCommit)
			} else {
				lw.end(ctx, LiveRetract)
			}
		}()
	}
	pol := sc.nodePolicy(b.node)
	newState, err := executeNode(bctx, sc.g, b.node, pol.Timeout, state)
	lw.close(ctx) // what the handler wrote goes before the branch's completion
	if err == nil {
		var update json.RawMessage
		if update, err = graphrun.StateUpdate(state, newState); err == nil {
			data = branchData(b, p.attempt, "result", string(update))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("execute branch %d of run %s: %w", b.index, h.runID, ctx.Err())
		}
		e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+b.node,
			"run_id", h.runID, "branch", b.index, "attempt", p.attempt+1, "error", err.Error())
		var herr *durable.HandlerError
		if retry := sc.retry(pol); errors.As(err, &herr) && !durable.IsNonRetryable(err) && p.attempt+1 < int64(retry.MaxAttempts) {
			delay := backoff(retry, p.attempt+2)
			rctx, err := atBranchCommit(ctx, h, b) // the test kit's seam (commit_hook.go)
			if err != nil {
				return false, fmt.Errorf("retry branch %d of run %s: %w", b.index, h.runID, err)
			}
			stored, err := e.retryBranch(context.WithoutCancel(rctx), h, b.index, p, delay)
			if err != nil {
				return false, err
			}
			next := branchItem(h, b, stored.attempt)
			next.Trace = it.Trace
			return true, e.dispatchBranch(context.WithoutCancel(ctx), next, max(time.Duration(stored.notBefore-e.clock().UnixNano()), 0))
		}
		failed = true
		data = failedBranchData(b, p.attempt, err) // branch_join.go
	}
	cctx, err := atBranchCommit(ctx, h, b) // the test kit's seam (commit_hook.go)
	if err != nil {
		return false, fmt.Errorf("commit branch %d of run %s: %w", b.index, h.runID, err)
	}
	stored, err := e.commitBranch(cctx, h, b, p.attempt, failed, data, emitter.Events())
	if err != nil || !stored {
		return err == nil, err
	}
	committed = true
	return true, e.afterBranch(ctx, h, b.index)
}

// failBranchPoison fails branch b, started st.starts times without completing.
func (e *Engine) failBranchPoison(ctx context.Context, h *head, b branchRef, st branchStart) error {
	cause := branchPoisonCause(st.starts)
	e.log.Error("branch failed: graph="+h.graph+" hash="+h.hash+" node="+b.node, "run_id", h.runID, "branch", b.index, "error", cause)
	stored, err := e.commitBranch(ctx, h, b, st.progress.attempt, true, branchData(b, st.progress.attempt, "error", jstr(cause)), nil)
	if err != nil || !stored {
		return err
	}
	return e.afterBranch(ctx, h, b.index)
}

// branchData is the data of a branch's completion row, with the member key:value last.
func branchData(b branchRef, attempt int64, key, value string) string {
	item := string(b.item)
	if item == "" {
		item = "null"
	}
	return jsonObject("index", itoa(b.index), "node", jstr(b.node), "item", item, "attempt", itoa(attempt+1), key, value)
}

// branchHead reads the head for a branch item and reports whether the item's branch is
// still to be run: same run, active, at the fan-out's step with the region open.
func (e *Engine) branchHead(ctx context.Context, it branchWork) (*head, bool, error) {
	h, err := e.getHead(ctx, it.RunID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if h.gen != it.Gen || (it.Nonce != "" && h.nonce != it.Nonce) || !h.active() || h.step != it.Step ||
		h.branchCount == 0 || it.Index >= h.branchCount {
		e.log.Debug("dropping branch of a run that moved on", "run_id", it.RunID, "branch", it.Index, "status", string(h.status))
		return nil, false, nil
	}
	return h, true, nil
}

// commitBranch stores branch b's completion row (failed: branch_failed) with data, in one
// batch with the fence's merge. It reports whether the branch's completion is stored (this
// commit's or a duplicate's); false with no error when the region was closed meanwhile.
func (e *Engine) commitBranch(ctx context.Context, h *head, b branchRef, attempt int64, failed bool, data string, emitted []graphrun.EmittedEvent) (bool, error) {
	id := newWriteID()
	var sp spills
	defer func() { e.release(ctx, &sp, nil) }()
	for convert := true; ; convert = false {
		typ := HistoryBranchCompleted
		if failed {
			typ = HistoryBranchFailed
		}
		now := e.clock()
		ops := []Op{
			{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: h.runID, RowKey: fenceKey(h.gen, h.branchBase, h.nonce),
				Properties: map[string]any{pTime: now}}},
			{Kind: OpInsert, Entity: Entity{PartitionKey: h.runID, RowKey: histKey(h.gen, h.slotSeq(b.index)), Properties: map[string]any{
				pType: typ, pName: ExecuteNodeName, pHistNode: b.node, pHistStep: h.step + 1, pTime: now, pData: data, pWriteID: id}}},
		}
		if !failed {
			// The events the branch emitted take the slots after its completion row.
			for j, ev := range emitted[:min(len(emitted), BranchSlots-1)] {
				ops = append(ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: h.runID, RowKey: histKey(h.gen, h.slotSeq(b.index)+1+int64(j)),
					Properties: map[string]any{pType: HistoryCustom, pName: ev.Name, pHistNode: b.node, pHistStep: h.step + 1, pTime: now,
						pData: jsonObject("name", jstr(ev.Name), "data", string(ev.Data)), pWriteID: id}}})
			}
		}
		err := e.spill(ctx, h.runID, h.nonce, ops, &sp)
		if err == nil {
			_, err = e.store.Submit(ctx, ops)
		} else if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrStorageFull) {
			return false, err // a payload whose put may have failed on a transport error: retried
		}
		if err == nil {
			e.release(ctx, &sp, ops)
			e.changes.notify(h.runID)
			return true, nil
		}
		if refused(err) && convert {
			// The result cannot be stored, in the batch or in the payload store (a store
			// that is full refuses both alike): the branch fails, naming the limit.
			e.release(ctx, &sp, nil)
			failed = true
			data = branchData(b, attempt, "error", jstr("branch result cannot be stored: "+err.Error()))
			ctx = failureRoom(ctx, err) // the failure is recorded however full the store is
			continue
		}
		if refused(err) {
			return false, fmt.Errorf("commit branch %d of run %s: %w", b.index, h.runID, err)
		}
		// Unknown outcome (a conflict or not-found included): the slot says.
		ent, gerr := e.store.Get(ctx, h.runID, histKey(h.gen, h.slotSeq(b.index)))
		switch {
		case gerr == nil:
			if str(ent.Properties, pWriteID) == id {
				e.release(ctx, &sp, ops)
				e.log.Info("branch commit landed although its answer was an error", "run_id", h.runID, "branch", b.index, "error", err.Error())
			} else {
				e.log.Debug("branch committed by another worker", "run_id", h.runID, "branch", b.index)
			}
			return true, nil
		case !errors.Is(gerr, ErrNotFound):
			sp.keep() // the batch may have landed and refer to them
			return false, fmt.Errorf("commit branch %d of run %s: %w (outcome unknown: %v)", b.index, h.runID, err, gerr)
		case errors.Is(err, ErrNotFound):
			// The fence is gone: the region was closed (joined, failed, cancelled) or the run
			// purged. The branch's work is discarded.
			e.log.Debug("branch dropped: its fan-out is closed", "run_id", h.runID, "branch", b.index)
			return false, nil
		default:
			sp.keep()
			return false, fmt.Errorf("commit branch %d of run %s: %w", b.index, h.runID, err)
		}
	}
}

// awaitBranchVersion puts a branch item back on the queue after a back-off: this process
// does not have its run's graph version (version.go).
func (e *Engine) awaitBranchVersion(ctx context.Context, h *head, it branchWork) error {
	it.VersionWaits++
	it.Retry = 0
	delay := versionBackoff(it.VersionWaits - 1)
	e.log.Debug("branch waits for a graph version this process does not have", "run_id", h.runID, "graph_hash", h.hash, "retry_in", delay.String())
	return e.dispatchBranch(context.WithoutCancel(ctx), it, delay)
}

// rescueBranch settles a branch item found on the poison queue as rescue (poison.go) does a
// run's: a branch that committed only enqueues the join; one whose deaths reach the kill
// limit fails; otherwise a fresh item goes back on the queue (after its back-off, if one is
// still ahead). Deliveries that ran out on storage errors alone count nothing.
func (e *Engine) rescueBranch(ctx context.Context, it branchWork) (bool, error) {
	h, ok, err := e.branchHead(ctx, it)
	if err != nil || !ok {
		return false, err
	}
	b := it.ref()
	if _, err := e.store.Get(ctx, h.runID, histKey(h.gen, h.slotSeq(b.index))); err == nil {
		return true, e.afterBranch(ctx, h, b.index)
	} else if !errors.Is(err, ErrNotFound) {
		return false, err
	}
	p, err := e.readProgress(ctx, h, b.index)
	if err != nil {
		return false, err
	}
	now := e.clock().UnixNano()
	var delay time.Duration
	if p.notBefore > now {
		delay = time.Duration(p.notBefore - now)
	} else {
		deaths := p.restarts
		if over, err := e.branchDied(ctx, p); err != nil {
			return false, err
		} else if over {
			deaths++
		}
		if e.overKillLimit(deaths) {
			return true, e.failBranchPoison(ctx, h, b, branchStart{progress: p, starts: deaths + 1})
		}
	}
	next := branchItem(h, b, p.attempt)
	next.Trace, next.Resent = it.Trace, true
	if err := e.dispatchBranch(ctx, next, delay); err != nil {
		return false, err
	}
	e.log.Info("repair put a poisoned branch back on the queue", "run_id", h.runID, "step", h.step, "branch", b.index, "restarts", p.restarts)
	return true, nil
}

// rawJSON is a JSON value kept as its text, so that a work item stays comparable.
type rawJSON string

// MarshalJSON returns the text (null when empty).
func (r rawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// UnmarshalJSON keeps the text.
func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = rawJSON(b)
	return nil
}
