package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Parallel branches (durable.Parallel, durable.Map): a node's route fans the run out into
// branches, one node visit each, that run at once wherever the fleet has capacity and join
// at a named node.
//
// Storage. The fan-out is one step commit, one batch: the head (which now names the join
// node and the open region below), the visit's node_completed and route_resolved rows (the
// decision lists the branches), a branches_started row, and a fence row. The commit reserves
// a region of history sequence numbers, BranchSlots per branch: slot 0 of branch i (at
// BranchBase + i×BranchSlots) takes its completion row, branch_completed (item, attempt and
// result: the state fields its node changed) or branch_failed (item, attempt and error);
// slots 1..BranchSlots-1 are kept for the events the branch emits. The head's HistSeq moves
// past the region, so later rows (events received, the join) follow it, and the history
// has gaps where slots stay unused.
//
// Each branch is its own work item ("br":<index>, "ba":<attempt>, its node and item in the
// message), enqueued by the fan-out's worker once the commit is stored. A branch worker
// reads the head (a run cancelled, failed or joined meanwhile: the branch does nothing),
// runs the node on the state as the fan-out left it, and commits one batch: the insert of
// its completion row plus a merge of the fence (If-Match *). It never writes the head, so
// siblings never fight over it. The insert makes the branch exactly once: a second
// committer of the same branch (a duplicate or redelivered item) fails with a conflict and
// reads the row: its write id says whose commit is stored (the ambiguity rule, commit.go).
// The fence makes a late branch harmless: the commit that closes the region (the join, a
// failure or a cancel) deletes it, so a branch that commits afterwards fails as a whole — a
// run purged and restarted under the same id never sees a stale branch row. After its
// commit a branch reads the region's completion rows (one query) and, when all are there
// or its own branch failed, enqueues the run's plain work item: the join.
//
// The join is that plain item meeting a head with an open region: it reads the completion
// rows, merges the results in branch index order (graphrun.Joiner: the graph's reducers;
// two branches that update a field with no reducer fail the run), and commits once — the
// head (state, step, the region closed) with a branches_joined row and the fence's delete —
// then goes on in-process with the join node. A failed branch fails the run there
// (branchFailed). A plain item that meets an incomplete region without a failure (the
// fan-out worker died before it enqueued every branch, or its enqueue failed) enqueues the
// branches that have no completion row again; duplicates are settled by the insert.
//
// A branch handler error is retried under the node's or the graph's retry policy: the branch
// records the failed attempt and its back-off in its progress row, then enqueues its item
// again after the back-off. The progress row also holds the branch's hold and the deaths
// counted against it, judged as a step's are: a branch started MaxStepStarts times without
// completing fails (branch_progress.go).
//
// Cost, steady state (table T, queue Q): the fan-out 1 T (one batch) + N Q enqueues; per
// branch 1 T head read, 1 T progress read (branch_progress.go), 1 T batch, 1 T query, and its message's receive and delete; the join
// 1 Q message (enqueued by the last branch), 1 T head read, 1 T query and 1 T batch; then the
// join node's visit as any step. A branch's query reads pages of gapPage rows up to the first
// branch still missing: one page, but for the last branches of a fan-out wider than gapPage.
// The width limit is durable.MaxBranches (256) branches per fan-out.

// History row types of a fan-out.
const (
	// HistoryBranchesStarted is the fan-out: {"join_node", "count", "first_seq", "slots"}.
	HistoryBranchesStarted = "branches_started"
	// HistoryBranchCompleted is one branch's completion: {"index", "node", "item",
	// "attempt", "result"}, result being the state fields its node changed.
	HistoryBranchCompleted = "branch_completed"
	// HistoryBranchFailed is one branch's failure: {"index", "node", "item", "attempt",
	// "error"}.
	HistoryBranchFailed = "branch_failed"
	// HistoryBranchesJoined is the join: {"join_node", "count", "state"}.
	HistoryBranchesJoined = "branches_joined"
)

// BranchSlots is the number of history sequence numbers a fan-out reserves per branch: slot
// 0 for the branch's completion row, the others for the events it emits.
const BranchSlots = 8

// branchRef identifies one branch of a head's open region.
type branchRef struct {
	index int64
	node  string
	item  json.RawMessage
}

// regionEnd is the sequence after h's region.
func (h *head) regionEnd() int64 { return h.branchBase + h.branchCount*BranchSlots }

// slotSeq is the sequence of the completion row of branch i.
func (h *head) slotSeq(i int64) int64 { return h.branchBase + i*BranchSlots }

// fenceKey is the row key of the fence of the region at base of run nonce. It sorts among a
// run's rows (purged with them) and names the nonce, so that a run that reuses the id never
// shares it.
func fenceKey(gen, base int64, nonce string) string { return seqKey('j', gen, base) + "-" + nonce }

// fannedOut is a visit whose route fans the run out: the run continues at the join node once
// the branches complete (at once when there are none). Its commit reserves the region and
// inserts the fence (addOps), once the commit's rows are known; once stored, the branches
// go to the queue (proceed).
type fannedOut struct{ visited }

func (o *fannedOut) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, d := c.n, o.decision
	n.node = d.JoinNode
	n.custom = customStatus(c.base, d.JoinNode)
	n.runnable = len(d.Branches) == 0
	c.row(HistoryBranchesStarted, OrchestratorName, o.node,
		jsonObject("join_node", jstr(d.JoinNode), "count", itoa(int64(len(d.Branches))), "slots", itoa(BranchSlots)))
}

// addOps reserves the fan-out's region (the head records it, HistSeq moves past it) and
// inserts its fence.
func (o *fannedOut) addOps(c *commitBuilder) {
	if len(o.decision.Branches) == 0 {
		return
	}
	n, ops := c.n, c.ops
	n.branchRows = nil
	n.branchBase, n.branchCount = n.histSeq+1, int64(len(o.decision.Branches))
	for _, op := range ops[1:] {
		if op.Entity.Properties[pType] == HistoryRouteResolved {
			n.branchSpec = parseSeq(op.Entity.RowKey)
		}
	}
	for _, op := range ops[1:] {
		if op.Entity.Properties[pType] == HistoryBranchesStarted {
			op.Entity.Properties[pData] = jsonObject("join_node", jstr(n.node), "count", itoa(n.branchCount),
				"first_seq", itoa(n.branchBase), "slots", itoa(BranchSlots))
		}
	}
	n.histSeq = n.regionEnd() - 1
	head := ops[0].Entity.Properties
	head[pHistSeq], head[pBranchBase], head[pBranchCount], head[pBranchSpec] = n.histSeq, n.branchBase, n.branchCount, n.branchSpec
	c.ops = append(ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: c.base.runID, RowKey: fenceKey(c.base.gen, n.branchBase, c.base.nonce),
		Properties: map[string]any{pTime: c.now, pWriteID: n.writeID}}})
}

// proceed puts the branches of the fan-out n just committed on the queue.
func (o *fannedOut) proceed(ctx context.Context, e *Engine, n *head) (*head, bool, error) {
	if n.active() && n.branchCount > 0 {
		return n, false, e.dispatchBranches(context.WithoutCancel(ctx), n, o.decision.Branches)
	}
	return e.proceed(ctx, n)
}

// joined is the join of a fan-out: the branches' results merged into the state.
type joined struct {
	node  string
	state json.RawMessage
}

func (o *joined) stepNode() string { return o.node }

func (o *joined) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	n.visits += base.branchCount
	c.setState(o.state)
	n.custom = customStatus(base, base.node)
	n.runnable = true
	c.row(HistoryBranchesJoined, OrchestratorName, base.node,
		jsonObject("join_node", jstr(base.node), "count", itoa(base.branchCount), "state", n.stateJSON))
}

// closeRegion finishes the batch of a commit on a head with an open region (buildCommit):
// one that moves the run past the fan-out's step (the join, or the run's failure) clears
// the region and deletes the fence.
func closeRegion(c *commitBuilder) {
	base, n := c.base, c.n
	if n.step == base.step && n.active() {
		return
	}
	n.branchBase, n.branchCount, n.branchSpec, n.branchRows = 0, 0, 0, nil
	head := c.ops[0].Entity.Properties
	head[pBranchBase], head[pBranchCount], head[pBranchSpec] = int64(0), int64(0), int64(0)
	c.ops = append(c.ops, closeFence(base))
}

// closeFence is the op that deletes the fence of h's open region.
func closeFence(h *head) Op {
	return Op{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: h.runID, RowKey: fenceKey(h.gen, h.branchBase, h.nonce)}}
}

// closeRegionOps adds to a batch that finishes h's run outside a step commit (a cancel) the
// closing of its open region, if any: ops[0] is the head's merge.
func closeRegionOps(ops []Op, h *head) []Op {
	if h.branchCount == 0 {
		return ops
	}
	p := ops[0].Entity.Properties
	p[pBranchBase], p[pBranchCount], p[pBranchSpec] = int64(0), int64(0), int64(0)
	return append(ops, closeFence(h))
}

// dispatchBranches enqueues one work item per branch of the fan-out n just committed.
func (e *Engine) dispatchBranches(ctx context.Context, n *head, branches []durable.Branch) error {
	for i, b := range branches {
		if err := e.dispatchBranch(ctx, branchItem(n, branchRef{index: int64(i), node: b.Node, item: b.Item}, 0), 0); err != nil {
			return err
		}
	}
	return nil
}

// branchItem returns the work item of branch b of h's open region, at attempt (0: first).
func branchItem(h *head, b branchRef, attempt int64) branchWork {
	return branchWork{workItem: itemOf(h), Index: b.index, Attempt: attempt, Node: b.node, Item: rawJSON(b.item)}
}

// gapPage is the page size of a branch's completion check: pages of a few rows, so that a
// check that meets a missing branch early (most checks, until the last branches finish)
// reads few rows, not every completed branch's result.
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

// regionState sums up completion rows: the lowest failed branch (nil: none) and whether
// every branch has completed.
func regionState(h *head, rows []Entity) (failed *Entity, complete bool) {
	for i := range rows {
		if rows[i].Properties[pType] == HistoryBranchFailed {
			return &rows[i], false
		}
	}
	return nil, int64(len(rows)) == h.branchCount
}

// awaitBranches handles a run's plain work item that meets an open region, before the step
// starts: it reports done when there is nothing to join yet, after putting the branches
// without a completion row back on the queue (their items were lost, or are duplicated
// now: the insert keeps one commit each). The rows read are kept on h for the join.
func (e *Engine) awaitBranches(ctx context.Context, h *head) (done bool, err error) {
	rows, err := e.completionRows(ctx, h, false)
	if err != nil {
		return false, err
	}
	h.branchRows = rows
	if failed, complete := regionState(h, rows); failed != nil || complete {
		return false, nil
	}
	branches, err := e.regionBranches(ctx, h)
	if err != nil {
		return false, err
	}
	have := map[int64]bool{}
	for _, r := range rows {
		have[(parseSeq(r.RowKey)-h.branchBase)/BranchSlots] = true
	}
	n := 0
	for i, b := range branches {
		if have[int64(i)] {
			continue
		}
		bw := branchItem(h, branchRef{index: int64(i), node: b.Node, item: b.Item}, 0)
		bw.Resent = true // its progress says which attempt runs, and when
		if err := e.dispatchBranch(ctx, bw, 0); err != nil {
			return false, err
		}
		n++
	}
	e.log.Info("branches put back on the queue", "run_id", h.runID, "step", h.step, "branches", n, "of", h.branchCount)
	return true, nil
}

// regionBranches reads the branches of h's open region from its route_resolved row.
func (e *Engine) regionBranches(ctx context.Context, h *head) ([]durable.Branch, error) {
	ent, err := e.store.Get(ctx, h.runID, histKey(h.gen, h.branchSpec))
	if err != nil {
		return nil, fmt.Errorf("read fan-out of run %s: %w", h.runID, err)
	}
	data, err := e.readSpilled(ctx, str(ent.Properties, pData), str(ent.Properties, pData+refSuffix))
	if err != nil {
		return nil, fmt.Errorf("read fan-out of run %s: %w", h.runID, err)
	}
	var d durable.RouteDecision
	if err := json.Unmarshal([]byte(data), &d); err != nil || int64(len(d.Branches)) != h.branchCount {
		return nil, fmt.Errorf("decode fan-out of run %s: %d branches, %v", h.runID, len(d.Branches), err)
	}
	return d.Branches, nil
}

// joinStep computes the join of h's open region: nothing (ready false) while a branch has
// neither completed nor failed, else the outcome to commit: the merged state, or the run's
// failure (a failed branch, or a merge that fails).
func (e *Engine) joinStep(ctx context.Context, sc *stepCtx, h *head) (outcome, bool, error) {
	rows := h.branchRows
	if rows == nil {
		var err error
		if rows, err = e.completionRows(ctx, h, false); err != nil {
			return nil, false, err
		}
	}
	failed, complete := regionState(h, rows)
	if failed != nil {
		data, err := e.readSpilled(ctx, str(failed.Properties, pData), str(failed.Properties, pData+refSuffix))
		if err != nil {
			return nil, false, fmt.Errorf("read failed branch of run %s: %w", h.runID, err)
		}
		var f struct {
			Index int64  `json:"index"`
			Node  string `json:"node"`
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(data), &f)
		return e.branchFailed(sc, h, f.Index, f.Node, f.Error), true, nil
	}
	if !complete {
		return nil, false, nil
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

// branchFailed is the outcome of a join that found branch index (visiting node) failed with
// cause: the branch node's failure route (durable.WithFailureRoute) when it has one — the run
// continues there with the state of the fan-out, the failure in StepInfo.Failure — else the
// run fails.
func (e *Engine) branchFailed(sc *stepCtx, h *head, index int64, node, cause string) outcome {
	msg := fmt.Sprintf("branch %d of %d (node '%s'): %s", index, h.branchCount, node, cause)
	if to := sc.nodePolicy(node).FailureNode; to != "" {
		e.log.Warn("branch failed, taking its failure route: graph="+h.graph+" hash="+h.hash+" node="+node,
			"run_id", h.runID, "failure_node", to, "error", msg)
		return &failureRouted{node: node, to: to, err: msg}
	}
	e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+node, "run_id", h.runID, "error", msg)
	o := failure("execute_node", ExecuteNodeName, msg)
	o.node = node
	return o
}

// parallelDecisionJSON is the data of a fan-out's route_resolved row: the decision's five
// keys, then join_node and branches.
func parallelDecisionJSON(d durable.RouteDecision) string {
	b, err := json.Marshal(d)
	if err != nil { // a normalised decision always encodes
		return jsonObject("action", jstr(string(d.Action)), "join_node", jstr(d.JoinNode))
	}
	return string(b)
}
