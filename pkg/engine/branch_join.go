package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// A fan-out's join (see branch.go for the scheme): the check each branch makes once it has
// settled (afterBranch), and the join, which merges the branches' results (joined) or takes
// one failure (branchFailed) once every branch has settled.

// gapPage is the page size of a read that stops at the first branch without a completion
// row: a window of a branch's completion check wider than it reads no more than a page past
// the branch missing.
const gapPage = 32

// completionRows reads the completion rows of h's region in index order. With stopAtGap it
// stops at the first branch without one (enough to tell the region incomplete), reading
// pages of gapPage rows.
func (e *Engine) completionRows(ctx context.Context, h *head, stopAtGap bool) ([]Entity, error) {
	return e.completionRange(ctx, h, 0, h.branchCount, stopAtGap)
}

// completionRange is completionRows for the branches from..to-1.
func (e *Engine) completionRange(ctx context.Context, h *head, from, to int64, stopAtGap bool) ([]Entity, error) {
	q := Query{PartitionKey: h.runID, RowKeyFrom: histKey(h.gen, h.slotSeq(from)), RowKeyTo: histKey(h.gen, h.slotSeq(to)),
		Where: []Cond{{Property: pType, Op: CondGe, Value: "branch_"}, {Property: pType, Op: CondLt, Value: "branch`"}}}
	if stopAtGap {
		q.Limit = gapPage
	}
	var out []Entity
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read branches of run %s: %w", h.runID, err)
		}
		for _, ent := range page.Entities {
			seq := parseSeq(ent.RowKey)
			if (seq-h.branchBase)%BranchSlots != 0 {
				continue
			}
			if stopAtGap && seq != h.slotSeq(from+int64(len(out))) {
				return out, nil
			}
			out = append(out, ent)
		}
		if page.Continuation == "" {
			return out, nil
		}
		q.Continuation = page.Continuation
	}
}

// afterBranch enqueues the join of h's region when every branch has settled (completed or
// failed), once branch index has: the branch that settles last enqueues it, whatever it and
// the others did (the join waits for every branch). The one that does is the last whose
// commit is stored: every other commit was stored before it, so before all of its reads.
// Two branches settling at once may both enqueue it; the join's commit keeps one.
func (e *Engine) afterBranch(ctx context.Context, h *head, index int64) error {
	settled, err := e.regionSettled(ctx, h, index)
	if err != nil || !settled {
		return err
	}
	return e.dispatch(context.WithoutCancel(ctx), h, 0)
}

// regionSettled reports whether every branch of h's region has a completion row, branch index
// having one. It looks near index first, where a missing branch is in any finish order (the
// next one in index order, the one before in reverse order, a close one at random but at the
// fan-out's end): windows of 1, 2, 4 … branches after those read, then as many before, in
// turn, until a window holds a branch missing or both ends of the region are reached. When
// the nearest missing branch is d branches away, it reads at most about 4d rows in about
// 2·log2(d) queries; when none is, the N rows in about log2(N).
func (e *Engine) regionSettled(ctx context.Context, h *head, index int64) (bool, error) {
	lo, hi := index, index+1 // the branches [lo, hi) have settled
	for w := int64(1); lo > 0 || hi < h.branchCount; w *= 2 {
		if hi < h.branchCount {
			to := min(hi+w, h.branchCount)
			if rows, err := e.completionRange(ctx, h, hi, to, true); err != nil || int64(len(rows)) != to-hi {
				return false, err
			}
			hi = to
		}
		if lo > 0 {
			from := max(lo-w, 0)
			if rows, err := e.completionRange(ctx, h, from, lo, true); err != nil || int64(len(rows)) != lo-from {
				return false, err
			}
			lo = from
		}
	}
	return true, nil
}

// regionState sums up the completion rows of h's region (in index order): whether every
// branch has settled, completed or failed, and then the lowest-index failed branch (nil:
// none). The join waits for every branch: failed is nil until all have settled.
func regionState(h *head, rows []Entity) (failed *Entity, settled bool) {
	if int64(len(rows)) != h.branchCount {
		return nil, false
	}
	for i := range rows {
		if rows[i].Properties[pType] == HistoryBranchFailed {
			return &rows[i], true
		}
	}
	return nil, true
}

// joinStep computes the join of h's open region: nothing (ready false) while a branch has
// neither completed nor failed, else the outcome to commit: the merged state, or the failure
// the join takes (branchFailed), or the run's failure when the merge fails.
func (e *Engine) joinStep(ctx context.Context, sc *stepCtx, h *head) (outcome, bool, error) {
	rows := h.branchRows
	if rows == nil {
		var err error
		if rows, err = e.completionRows(ctx, h, false); err != nil {
			return nil, false, err
		}
	}
	failed, settled := regionState(h, rows)
	if !settled {
		return nil, false, nil
	}
	if failed != nil {
		f, err := e.joinFailure(ctx, h, rows)
		if err != nil {
			return nil, false, err
		}
		return e.branchFailed(sc, h, f), true, nil
	}
	results := make([]graphrun.BranchResult, len(rows))
	for i, r := range rows {
		data, err := e.readSpilled(ctx, str(r.Properties, pData), str(r.Properties, pData+refSuffix))
		if err != nil {
			return nil, false, fmt.Errorf("read branch %d of run %s: %w", i, h.runID, err)
		}
		var c struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return nil, false, fmt.Errorf("decode branch %d of run %s: %w", i, h.runID, err)
		}
		results[i] = graphrun.BranchResult{Index: i, Node: str(r.Properties, pHistNode), Update: c.Result}
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return nil, false, err
	}
	var merged json.RawMessage
	if bg, ok := graphrun.Of(sc.g).(graphrun.Joiner); ok {
		merged, err = bg.Join(graphrun.WithStepInfo(ctx, stepInfo(h)), state, results)
	} else {
		merged, err = graphrun.JoinBranches(state, results)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("join branches of run %s: %w", h.runID, ctx.Err())
		}
		cause := fmt.Sprintf("join at '%s': %v", h.node, err)
		e.log.Warn("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
		o := failure("orchestrator", OrchestratorName, cause)
		o.node = h.node
		return o, true, nil
	}
	return &joined{node: h.node, state: merged}, true, nil
}

// branchFailure is one failed branch, as its branch_failed row records it.
type branchFailure struct {
	Index int64  `json:"index"`
	Node  string `json:"node"`
	Error string `json:"error"`
	// Handler: the error is the node handler's own (failedBranchData).
	Handler bool `json:"handler"`
	// failed is how many branches of the region failed.
	failed int
}

// joinFailure returns the failure the join of h's settled region takes, rows holding a
// failed branch: the lowest-index branch whose failure is not its handler's own error (it
// fails the run whatever the others did), else the lowest-index failed branch. The rule
// depends on the rows only, never on the order the branches finished in.
func (e *Engine) joinFailure(ctx context.Context, h *head, rows []Entity) (branchFailure, error) {
	var lowest, other *branchFailure // the lowest failure, and the lowest not the handler's
	n := 0
	for _, r := range rows {
		if r.Properties[pType] != HistoryBranchFailed {
			continue
		}
		data, err := e.readSpilled(ctx, str(r.Properties, pData), str(r.Properties, pData+refSuffix))
		if err != nil {
			return branchFailure{}, fmt.Errorf("read failed branch of run %s: %w", h.runID, err)
		}
		f := new(branchFailure)
		_ = json.Unmarshal([]byte(data), f) // a row the engine wrote; a member it lacks reads as zero
		n++
		if lowest == nil {
			lowest = f
		}
		if other == nil && !f.Handler {
			other = f
		}
	}
	if other != nil {
		lowest = other
	}
	lowest.failed = n
	return *lowest, nil
}

// branchFailed is the outcome of a join that takes failure f: the failed node's failure route
// (durable.WithFailureRoute) when it has one and the error is its handler's own — the run
// continues there with the state of the fan-out, the failure in StepInfo.Failure — else the
// run's failure. Either way the branches' visits count.
func (e *Engine) branchFailed(sc *stepCtx, h *head, f branchFailure) outcome {
	msg := fmt.Sprintf("branch %d of %d (node '%s'): %s", f.Index, h.branchCount, f.Node, f.Error)
	if to := sc.nodePolicy(f.Node).FailureNode; to != "" && f.Handler {
		e.log.Warn("branch failed, taking its failure route: graph="+h.graph+" hash="+h.hash+" node="+f.Node,
			"run_id", h.runID, "failure_node", to, "failed_branches", f.failed, "error", msg)
		return &failureRouted{node: f.Node, to: to, err: msg, visits: h.branchCount}
	}
	e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+f.Node, "run_id", h.runID,
		"failed_branches", f.failed, "handler_error", f.Handler, "error", msg)
	o := failure("execute_node", ExecuteNodeName, msg)
	o.node = f.Node
	return o
}

// failedBranchData is the data of the branch_failed row of branch b whose attempt failed for
// good with err: "handler": true when err is the node handler's own (a *durable.HandlerError:
// its error, panic or timeout), the only failure that may take the node's failure route. A
// branch that fails otherwise — a result that does not fit the state model or cannot be
// stored, a branch started MaxStepStarts times without completing — has rows without it (branchData).
func failedBranchData(b branchRef, attempt int64, err error) string {
	data := branchData(b, attempt, "error", jstr(err.Error()))
	if herr := (*durable.HandlerError)(nil); errors.As(err, &herr) {
		data = data[:len(data)-1] + `,"handler":true}`
	}
	return data
}
