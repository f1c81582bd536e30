package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Rewind: a Failed run continues from the step that failed.
//
// A rewind is one conditional write on the run's head, as every transition is: a merge with
// If-Match on the ETag of the Failed head it read, and a run_rewound history row after the
// run_failed row, both stamped with the rewind's write id. So of two rewinds of one failure
// one lands and the other reads a Running head (*RunNotFailedError); a rewind whose answer is
// lost is settled by reading its row (the ambiguity rule, commit.go). Nothing of the history
// goes: the run_failed row stays, the run_rewound row records the reason and the failed step
// (its number, its kind, its node and its error), and the run goes on under the same graph
// version (the head's pin is not touched).
//
// The head goes back to Running at the step before the failed one, so that the failed step
// runs again as itself: its handlers see the same StepInfo.Step, so the same IdempotencyKey,
// with fresh attempts (Attempt 1 again, its retry policy counted from zero, its deaths
// forgotten). What runs again is what failed, as its run_failed row and the head say:
//
//   - a node that failed for good (its retries spent, a non-retryable error, a timeout, a step
//     started too often): the node is visited again;
//   - a route that failed after its node completed (a route error, a fan-out or child decision
//     refused): the route is resolved again on the state the node committed; the node does not
//     run again (the head's Reroute mark, head_rewind.go);
//   - an event handler that failed: the event, still in the inbox, is applied again;
//   - a wait for an event that timed out: the wait starts again with its timeout from now;
//   - a fan-out whose join failed (a branch failed, or the merge did): the region is opened
//     again, after the run_rewound row; the branches that completed are carried into it from
//     the failed region without running their node (rewind_branch.go), the failed ones run
//     again with fresh attempts, and the join follows as usual;
//   - a run that failed because its child run failed: the child is rewound first, the same way
//     (and its own failed child before it, down the chain), then the parent, which waits for
//     the child again and resumes when it completes. A child that was terminated cannot be
//     rewound: the parent's rewind then meets it again and fails again, as it did.
//
// A run failed at its MaxSteps fails again at once: its graph version's budget is spent.
//
// Cost: 1 T head read, 1 T read of the run_failed row, 1 T batch, then the run's work item
// (1 Q) — for a fan-out one item per branch (N Q) and, per carried branch, 1 T read and 1 T
// batch; the run's rows in the active index are written again (2 T, 4 with a group or owner)
// and its failure index rows deleted (2 T, 3 with an owner).

// HistoryRunRewound is the history row of a rewind: {"reason", "failed_step", "failed_name",
// "node", "error"}, the step that failed (its number, the internal name of its kind:
// ExecuteNodeName, ResolveRouteName, ApplyEventName or OrchestratorName), the node it failed
// at, and the run's failure message.
const HistoryRunRewound = "run_rewound"

// Rewinder is an optional capability of a Runs: rewinding failed runs. The Engine implements
// it.
type Rewinder interface {
	// RewindRun continues the Failed run instanceID from the step that failed, recording
	// reason. Errors: ErrRunNotFound for an unknown run, *RunNotFailedError for a run that is
	// not Failed (also when a concurrent rewind got there first), *RewindUnsupportedError for
	// a failure a rewind cannot take up.
	RewindRun(ctx context.Context, instanceID, reason string) error
	// RewindRuns rewinds the runs a filter selects, one page at a time. Errors:
	// ErrInvalidQuery for a filter RewindFilter.Validate refuses or a continuation token
	// RewindRuns did not return.
	RewindRuns(ctx context.Context, f RewindFilter) (RewindResult, error)
}

var _ Rewinder = (*Engine)(nil)

// RunNotFailedError reports a rewind of a run that is not Failed.
type RunNotFailedError struct {
	// InstanceID is the run's id.
	InstanceID string
	// Status is the run's status.
	Status RunStatus
}

// Error names the run and its status.
func (e *RunNotFailedError) Error() string {
	return fmt.Sprintf("run '%s' is %s; only a Failed run can be rewound", e.InstanceID, e.Status)
}

// RewindUnsupportedError refuses the rewind of a Failed run whose failure a rewind cannot
// take up: a fan-out's join that failed before the engine recorded in run_failed rows where a
// rewind takes the run up (its region is no longer known).
type RewindUnsupportedError struct {
	// InstanceID is the run's id.
	InstanceID string
	// Reason says why.
	Reason string
}

// Error names the run and the reason.
func (e *RewindUnsupportedError) Error() string {
	return fmt.Sprintf("run '%s' cannot be rewound: %s", e.InstanceID, e.Reason)
}

// RewindRun implements Rewinder (see the scheme above).
func (e *Engine) RewindRun(ctx context.Context, instanceID, reason string) error {
	_, err := e.rewindOne(ctx, instanceID, reason, nil, 0)
	return err
}

// failedStep is what a run's run_failed row says of the step that failed.
type failedStep struct {
	name, node, msg string
	// rewind is the row's "rewind" member (rewindFrom).
	rewind struct {
		From     string `json:"from"`
		FirstSeq int64  `json:"first_seq"`
		Count    int64  `json:"count"`
		SpecSeq  int64  `json:"spec_seq"`
	}
}

// legacyJoin reports a failure of h at a fan-out's join whose run_failed row has no "rewind"
// member (written before it existed): a branch's failure (the row names the branch's node, the
// head the join node) or the merge's.
func (f failedStep) legacyJoin(h *head) bool {
	if f.rewind.From != "" {
		return false
	}
	branch := f.name == ExecuteNodeName && f.node != h.node && strings.HasPrefix(f.msg, "execute_node failed: branch ")
	merge := f.name == OrchestratorName && strings.HasPrefix(f.msg, "orchestrator failed: join at '"+h.node+"'")
	return branch || merge
}

// rewindFrom returns the "rewind" member of the run_failed row of a step on base: where a
// rewind takes the run up when it is not the step's start. A region when base has an open
// fan-out (its join failed), the route when the step's node completed before it failed; ""
// otherwise.
func rewindFrom(base *head, nodeCompleted bool) string {
	switch {
	case base.branchCount > 0:
		return jsonObject("from", jstr("region"), "first_seq", itoa(base.branchBase), "count", itoa(base.branchCount),
			"spec_seq", itoa(base.branchSpec))
	case nodeCompleted:
		return jsonObject("from", jstr("route"))
	}
	return ""
}

// readFailedStep reads the run_failed row of h, a Failed head: its last history row.
func (e *Engine) readFailedStep(ctx context.Context, h *head) (failedStep, error) {
	var f failedStep
	ent, err := e.store.Get(ctx, h.runID, histKey(h.gen, h.histSeq))
	if err != nil {
		return f, fmt.Errorf("read the failure of run %s: %w", h.runID, err)
	}
	p := ent.Properties
	if str(p, pType) != HistoryRunFailed {
		return f, fmt.Errorf("read the failure of run %s: its last history row is %q, not %s", h.runID, str(p, pType), HistoryRunFailed)
	}
	data, err := e.readSpilled(ctx, str(p, pData), str(p, pData+refSuffix))
	if err != nil {
		return f, fmt.Errorf("read the failure of run %s: %w", h.runID, err)
	}
	var d struct {
		Error  string          `json:"error"`
		Rewind json.RawMessage `json:"rewind"`
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return f, fmt.Errorf("decode the failure of run %s: %w", h.runID, err)
	}
	if len(d.Rewind) > 0 {
		if err := json.Unmarshal(d.Rewind, &f.rewind); err != nil {
			return f, fmt.Errorf("decode the failure of run %s: %w", h.runID, err)
		}
	}
	f.name, f.node, f.msg = str(p, pName), str(p, pHistNode), d.Error
	return f, nil
}

// maxRewindReason bounds, in bytes, the reason a rewind records (cut at a character
// boundary, "…" marking a cut).
const maxRewindReason = 4 << 10

// rewindOne rewinds run instanceID; with parent, only a child of parent (ErrRunNotFound
// otherwise). depth counts the children rewound above it (bounded by MaxChildDepth). It
// returns the head as written.
func (e *Engine) rewindOne(ctx context.Context, instanceID, reason string, parent *head, depth int) (*head, error) {
	if !ValidInstanceID(instanceID) {
		return nil, ErrRunNotFound
	}
	if len(reason) > maxRewindReason {
		reason = cutAtRune(reason, maxRewindReason-len("…")) + "…"
	}
	var sp spills
	defer func() { e.release(ctx, &sp, nil) }()
	id := newWriteID()
	for range maxHeadRetries {
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return nil, runLookupError(err)
		}
		if parent != nil && (h.parent != parent.runID || h.parentNonce != parent.nonce) {
			return nil, ErrRunNotFound
		}
		if h.status != StatusFailed {
			return nil, &RunNotFailedError{InstanceID: instanceID, Status: h.status}
		}
		f, err := e.readFailedStep(ctx, h)
		if err != nil {
			return nil, err
		}
		if f.legacyJoin(h) {
			return nil, &RewindUnsupportedError{InstanceID: instanceID, Reason: "it failed at a fan-out's join before this version of the engine recorded the fan-out with the failure"}
		}
		if child := h.awaited(); child != "" && depth < e.opts.MaxChildDepth {
			// Its child's failure failed it: the child goes first, so the parent finds it running.
			_, err := e.rewindOne(ctx, child, reason, h, depth+1)
			var nf *RunNotFailedError
			if err != nil && !errors.As(err, &nf) && !errors.Is(err, ErrRunNotFound) {
				return nil, fmt.Errorf("rewind run=%s: its child: %w", instanceID, err)
			}
		}
		now := e.clock()
		n, ops, err := e.rewindOps(ctx, h, f, reason, now, id)
		if err != nil {
			return nil, err
		}
		e.indexRewound(ctx, n) // listed as active before it is (rewind_index.go)
		if n.runnable || n.branchCount > 0 || n.waitDeadline != 0 {
			// A backup of the work the rewind dispatches once stored, should its process die
			// in between: dropped if the rewind never lands, or the step has moved on.
			if err := e.dispatch(context.WithoutCancel(ctx), n, e.opts.RepairAfter); err != nil {
				return nil, fmt.Errorf("rewind run=%s: %w", instanceID, err)
			}
		}
		if err = e.spill(ctx, instanceID, h.nonce, ops, &sp); err == nil {
			_, err = e.store.Submit(ctx, ops)
		}
		if err != nil && !refused(err) {
			// Unknown outcome (a conflict included): its run_rewound row says whether it is stored.
			_, landed, rerr := e.resolveWrite(ctx, instanceID, h.gen, h.nonce, h.histSeq+1, id)
			if rerr != nil {
				sp.keep()
				return nil, fmt.Errorf("rewind run=%s: %w (outcome unknown: %v)", instanceID, err, rerr)
			}
			if landed {
				e.log.Info("rewind stored although its answer was an error", "run_id", instanceID, "error", err.Error())
				err = nil
			}
		}
		switch {
		case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
			continue // another writer changed the head: read it again
		case err != nil:
			if !refused(err) {
				sp.keep()
			}
			return nil, fmt.Errorf("rewind run=%s: %w", instanceID, err)
		}
		e.release(ctx, &sp, ops)
		e.rewound(ctx, h, n, f)
		return n, nil
	}
	return nil, fmt.Errorf("rewind run=%s: head keeps changing: %w", instanceID, ErrConflict)
}

// rewindOps returns the head h's rewind writes and the batch that writes it: the head's merge
// and the run_rewound row (and, for a fan-out, the fence of its new region).
func (e *Engine) rewindOps(ctx context.Context, h *head, f failedStep, reason string, now time.Time, id string) (*head, []Op, error) {
	n := h.clone()
	n.status, n.runnable = StatusRunning, true
	n.step = h.step - 1 // the failed step runs again as itself
	n.outputJSON, n.outputRef = "", ""
	n.attempt, n.notBefore, n.restarts, n.holder, n.holdUntil = 0, 0, 0, "", 0
	n.updated, n.writeID = now, id
	n.histSeq = h.histSeq + 1
	props := map[string]any{
		pStatus: string(StatusRunning), pRunnable: true, pStep: n.step, pOutput: "", pOutput + refSuffix: "",
		pAttempt: int64(0), pNotBefore: int64(0), pRestarts: int64(0), pHolder: "", pHoldUntil: int64(0),
		pUpdated: now, pWriteID: id, pHistSeq: n.histSeq,
	}
	var extra []Op
	switch {
	case f.rewind.From == "region":
		r := f.rewind
		if r.Count <= 0 || r.FirstSeq <= 0 || r.SpecSeq <= 0 {
			return nil, nil, fmt.Errorf("rewind run=%s: its failure names a bad region", h.runID)
		}
		n.branchBase, n.branchCount, n.branchSpec, n.carryBase = n.histSeq+1, r.Count, r.SpecSeq, r.FirstSeq
		n.histSeq = n.regionEnd() - 1
		n.runnable, props[pRunnable] = false, false // the branches go to the queue; the last to settle enqueues the join
		props[pBranchBase], props[pBranchCount], props[pBranchSpec], props[pCarryBase] = n.branchBase, n.branchCount, n.branchSpec, n.carryBase
		props[pHistSeq] = n.histSeq
		extra = append(extra, Op{Kind: OpInsert, Entity: Entity{PartitionKey: h.runID, RowKey: fenceKey(h.gen, n.branchBase, h.nonce),
			Properties: map[string]any{pTime: now, pWriteID: id}}})
	case f.rewind.From == "route":
		n.reroute, props[pReroute] = true, true
	case h.awaited() != "":
		// Its child's wait: the step reads the child's head (rewound first) and rechecks it.
	case h.waiting != "":
		n.runnable = h.pending > 0 // its event is in the inbox (a handler that failed), or is to come
		if f.name == OrchestratorName && h.waitTimeout > 0 {
			n.waitDeadline = now.Add(time.Duration(h.waitTimeout)).UnixNano() // the wait starts again
			props[pWaitDeadline] = n.waitDeadline
		}
		props[pRunnable] = n.runnable
	}
	row := histRow{typ: HistoryRunRewound, name: OrchestratorName, node: f.node, data: jsonObject(
		"reason", jstr(reason), "failed_step", itoa(h.step), "failed_name", jstr(f.name), "node", jstr(f.node), "error", jstr(f.msg))}
	ops := []Op{{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: h.runID, RowKey: headRowKey, Properties: props}}}
	ops = historyOps(ops, h.runID, h.gen, h.histSeq, h.step, now, id, []histRow{row})
	return n, append(ops, extra...), nil
}

// rewound carries on after the rewind of h (Failed, failure f) as n is stored: the index, the
// run's work (its item, or its branches' items), the feed's followers.
func (e *Engine) rewound(ctx context.Context, h, n *head, f failedStep) {
	ctx = context.WithoutCancel(ctx)
	e.indexRewound(ctx, n)
	e.unindexFailure(ctx, h)
	var err error
	switch {
	case n.branchCount > 0:
		err = e.dispatchRegion(ctx, n)
	case n.runnable:
		err = e.dispatch(ctx, n, 0)
	case n.waitDeadline != 0:
		err = e.dispatch(ctx, n, time.Duration(n.waitDeadline-e.clock().UnixNano()))
	}
	if err != nil {
		// The rewind is stored; the repair pass's walk of the active index finds a run without work.
		e.log.Warn("rewound run's work not dispatched: the repair pass takes it up", "run_id", n.runID, "error", err.Error())
	}
	e.log.Info("run rewound", "run_id", n.runID, "graph", n.graph, "step", h.step, "name", f.name, "node", f.node)
	e.changes.notify(n.runID)
}
