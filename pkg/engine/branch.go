package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Parallel branches (durable.Parallel, durable.Map): a node's route fans the run out into
// branches, one node visit each, that run at once wherever the fleet has capacity and join
// at a named node.
//
// The decision. A Graph that is not a GraphRegistration may return any decision, so the
// visit checks it before anything of it is committed (fanOut): at most durable.MaxBranches
// branches (the highest index a branch item carries, workitem_codec.go), each with a node and
// an item of valid JSON of at most durable.MaxBranchItemBytes, and a join node; else the run
// fails at the route. A fan-out is 1 + N node visits under MaxSteps (the fan-out's node and
// each branch, completed or failed): one whose branches would pass the budget fails the run
// with the max-steps error, before any branch runs.
//
// Storage. The fan-out is one step commit, one batch: the head (which now names the join
// node and the open region below), the visit's node_completed and route_resolved rows (the
// decision lists the branches), a branches_started row, and a fence row. The commit reserves
// a region of history sequence numbers, BranchSlots per branch: slot 0 of branch i (at
// BranchBase + i×BranchSlots) takes its completion row, branch_completed (item, attempt and
// result: the state fields its node changed) or branch_failed (item, attempt, error, and
// "handler": true when the error is the node handler's own); slots 1..BranchSlots-1 are kept
// for the events the branch emits (durable.MaxEmitsPerBranch). The head's HistSeq moves past
// the region, so later rows (events received, the join) follow it, and the history has gaps
// where slots stay unused.
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
// commit a branch checks whether every branch of the region has settled (afterBranch) and,
// when all have, enqueues the run's plain work item: the join.
//
// The join is that plain item meeting a head with an open region: it reads the completion
// rows and, once every branch has settled, commits once — the head (state, step, the region
// closed) with its rows and the fence's delete — then goes on in-process. With no branch
// failed it merges the results in branch index order (graphrun.Joiner: the graph's reducers;
// two branches that update a field with no reducer fail the run), writes a branches_joined
// row and goes on with the join node. With branches failed it takes one failure
// (branchFailed): the lowest-index branch whose failure is not its handler's own error (a
// result that does not fit the state model or cannot be stored, an item that ran out of
// deliveries) fails the run, as the same node's failure as a step does; else the
// lowest-index failed branch takes its node's failure route, or fails the run when it has
// none. The join waits for every branch, failed ones included, so that the outcome and the
// history are the same in whatever order the branches finish: a failure taken as soon as it
// is stored would depend on which sibling failed first, its failure node could run beside
// siblings still running their handlers, and the visits counted would depend on how many had
// run. The price is that a failure waits for its slowest sibling, as a success does; a
// node's timeout (durable.WithTimeout) bounds that wait. A plain item that meets an incomplete
// region (the fan-out worker died before it enqueued every branch, or its enqueue failed)
// enqueues the branches that have no completion row again; duplicates are settled by the
// insert.
//
// A branch handler error is retried under the node's or the graph's retry policy: the branch
// records the failed attempt and its back-off in its progress row, then enqueues its item
// again after the back-off. The progress row also holds the branch's hold and the deaths
// counted against it, judged as a step's are: a branch started MaxStepStarts times without
// completing fails (branch_progress.go). The retries of a branch are attempts of its one
// visit.
//
// Cost, steady state (table T, queue Q): the fan-out 1 T (one batch) + N Q enqueues; per
// branch 1 T head read, 1 T progress read (branch_progress.go), 1 T batch, its completion
// check, and its message's receive and delete; the join 1 Q message (enqueued by the branch that settled last), 1 T head read,
// 1 T query (pages of up to 1 000 rows) and 1 T batch; then the join node's visit as any
// step. A branch's completion check looks for a branch still missing next to its own, on
// both sides, in windows that double (1, 2, 4 … branches after it, then as many before it, in
// turn), and stops at the first window with a branch missing: when the nearest missing
// branch is d branches away, it reads at most about 4d rows in about 2·log2(d) queries. In
// index order (as a queue hands branches out) a check is 1 query that reads no row; in
// reverse order 2 queries and 1 row; in a random order a few rows and 2–3 queries on
// average; the check that finds every branch settled reads all N rows, in about log2(N)
// queries. The width limit is durable.MaxBranches (256) branches per fan-out.

// History row types of a fan-out.
const (
	// HistoryBranchesStarted is the fan-out: {"join_node", "count", "first_seq", "slots"}.
	HistoryBranchesStarted = "branches_started"
	// HistoryBranchCompleted is one branch's completion: {"index", "node", "item",
	// "attempt", "result"}, result being the state fields its node changed.
	HistoryBranchCompleted = "branch_completed"
	// HistoryBranchFailed is one branch's failure: {"index", "node", "item", "attempt",
	// "error"}, and "handler": true when the error is the node handler's own (its error, panic
	// or timeout: a *durable.HandlerError), the only failure that may take the node's failure
	// route.
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

// fanOut is the outcome of visit v of h, whose route fans the run out: the fan-out, unless
// its decision is one the branch items cannot carry (checkFanOut: the run fails at the route)
// or its branches would take the run past its MaxSteps (the run fails with the max-steps
// error). Either failure keeps the node's completion, as a route's failure does.
func (e *Engine) fanOut(sc *stepCtx, h *head, v visited) outcome {
	var o *runFailed
	if err := checkFanOut(v.decision); err != nil {
		e.log.Warn("resolve_route failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o = failure("resolve_route", ResolveRouteName, err.Error())
	} else if h.visits+1+int64(len(v.decision.Branches)) > sc.maxSteps {
		o = e.maxStepsExceeded(sc, h)
	} else {
		return &fannedOut{v}
	}
	o.node, o.state, o.emitted = h.node, v.state, v.emitted
	return o
}

// checkFanOut checks a fan-out decision as durable.Parallel and durable.Map make them: a join
// node, at most durable.MaxBranches branches, each with a node and an item of valid JSON of
// at most durable.MaxBranchItemBytes. The messages are durable's own.
func checkFanOut(d durable.RouteDecision) error {
	switch {
	case d.JoinNode == "":
		return errors.New("action 'parallel' requires join_node")
	case len(d.Branches) > durable.MaxBranches:
		return fmt.Errorf("parallel fan-out of %d branches is above the limit of %d", len(d.Branches), durable.MaxBranches)
	}
	for i, b := range d.Branches {
		item := bytes.TrimSpace(b.Item)
		switch {
		case b.Node == "":
			return fmt.Errorf("parallel branch %d requires a node", i)
		case len(item) > 0 && !json.Valid(item):
			return fmt.Errorf("parallel branch %d item is not valid JSON", i)
		case len(item) > durable.MaxBranchItemBytes:
			return fmt.Errorf("parallel branch %d item of %d bytes is above the limit of %d bytes", i, len(item), durable.MaxBranchItemBytes)
		}
	}
	return nil
}

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
		c.stateData("join_node", jstr(base.node), "count", itoa(base.branchCount)))
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
	if base.carryBase != 0 { // a rewound region's carry ends with it (rewind_branch.go)
		n.carryBase, head[pCarryBase] = 0, int64(0)
	}
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
	if h.carryBase != 0 {
		p[pCarryBase] = int64(0)
	}
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

// parallelDecisionJSON is the data of a fan-out's route_resolved row: the decision's five
// keys, then join_node and branches.
func parallelDecisionJSON(d durable.RouteDecision) string {
	b, err := json.Marshal(d)
	if err != nil { // a normalised decision always encodes
		return jsonObject("action", jstr(string(d.Action)), "join_node", jstr(d.JoinNode))
	}
	return string(b)
}
