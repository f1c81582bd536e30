package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Child runs. A route may start a run of another registered graph, the child
// (durable.StartChild), and continue at a resume node once the child has completed. Storage
// decides every hand-over, so a worker that dies anywhere neither loses a child nor starts
// two:
//
//   - Its id. ChildInstanceID derives the child's instance id from the parent's id,
//     generation, nonce and step: every attempt of the step names the same child.
//   - Starting. The parent's step commits first, in its one batch: the head waits for the
//     child (Waiting holds the child's id, Resume the resume node, WaitDeadline the first
//     recheck), a child_started history row, and a link row "l<gen:6>-<step:16>" in the
//     parent's partition that keeps the child's graph, input and Into field. Only then is the
//     child started, as StartRun starts a run but insert-only: a head that already holds the
//     id is this very child (an earlier attempt's, it names the same parent run) or another
//     run's, which fails the parent. A worker that dies between the two writes leaves the
//     parent waiting with its recheck timer on the queue (or its work item to come back); the
//     recheck finds no child and starts it from the link row. A child is therefore started
//     only after its parent stored the wait, and only once.
//   - Finishing. The commit that finishes a child (and a cancel of it) notifies its parent,
//     only while the parent waits for it (notifyParent, child_links.go: a child_finished
//     history row and the head made runnable, in one batch conditioned on the parent's head:
//     one notice per wait), and the parent's work item wakes it. Whatever wakes the parent,
//     its notice or its recheck timer, it point-reads the child's head and believes only
//     that: a completed child resumes it (one batch: child_completed history row, the child's
//     final state in the Into field); a failed or terminated child sends it along the
//     failure route of the node that started the child (childFailed), or fails it. A notice
//     that never came (the child's worker died after its last commit) is made up for by the
//     recheck, due RepairAfter after the start, then every half of the child's age, at
//     least hourly.
//   - Reaching the family (child_links.go). Cancelling a parent cancels the chain of children
//     it waits for, one run after the other, in the background: the cancel answers once the
//     parent is cancelled, having stored the intent to cancel its child; a work item then
//     cancels the chain, each child's cancel storing the next intent before the one above it
//     goes, the repair pass taking up one whose worker died (cancel_family.go). Purging a parent purges the runs below it
//     first, depth first, inside its call. Neither recurses. A finished child its parent still waits for is never
//     purged (*ChildAwaitedError): the parent would take its absence for a child that was
//     never started.
//   - Bounding the family. A family is a run started directly (its root) and every run
//     started below it. Each head keeps its place: Depth (0 on the root), Root (the root's
//     id; "" on the root) and Family, the number of the family's runs that had started as
//     far as the run knows — a child starts with its parent's count plus one (itself), and a
//     parent that goes on after its child (resumed, or along a failure route) takes the
//     child's count, which holds everything started below the child (for a child that failed
//     or was cancelled while it waited for a child of its own, the largest count along that
//     chain of waits: chainFamily). A run starts a child only at a step of its own, while
//     every ancestor waits for it, so a family's runs start one at a time and the count the
//     starting run holds is the number started so far. Before the step that would start a
//     child commits, checkChild refuses it when the child would be deeper than MaxChildDepth
//     or the family's runs would pass MaxFamilyRuns (familyBound): the step fails as a node
//     failure, taking the node's failure route, if any. Storage decides the count as it does
//     the rest: it is carried by the child's insert-only start and by the If-Match commits of
//     the parent's steps, so a crash or a duplicate delivery starts the same child with the
//     same count, or loses its commit. What it misses: a start that races a cancel of the
//     chain above it (a parent woken by its recheck before the chain below is cancelled, see
//     cancelled); such a run keeps counting on its own chain, bounded by both limits.
//
// Cost, beyond an ordinary step: the starting step's batch carries two rows more; the start
// of the child is a start (3 T + 1 Q, its index rows) and a read of the parent; its notice is
// 4 T (the parent's head read, a due row written and deleted, the batch) + 1 Q; the resuming
// step reads the child's head and the link row (and the output payload of a large one) before
// its one batch (and one read per run of the chain below a child that failed or was cancelled
// while it waited for its own, when the run takes its failure route); each recheck while the child runs is 1 Q and 1 T read. The
// family's bounds cost nothing: they live in the heads the steps write anyway. A status read
// of a run that started children adds one query of its link rows.
const (
	// ChildRunPrefix starts the instance id of every child run (ChildInstanceID).
	ChildRunPrefix = "child~"
	// HistoryChildStarted is the history row of a step that started a child run: data
	// {"child_instance_id", "graph_name", "resume_node", "into"}.
	HistoryChildStarted = "child_started"
	// HistoryChildCompleted is the history row of the step that resumed a run after its child
	// completed: data {"child_instance_id", "into", "state"}.
	HistoryChildCompleted = "child_completed"
	// HistoryChildFinished is the history row of a child run's notice to its parent that it
	// finished (completed, failed or was terminated), which wakes the parent to read the
	// child: data {"child_instance_id", "runtime_status"}. At most one per wait; none when the
	// parent's recheck read the child first.
	HistoryChildFinished = "child_finished"
	// MaxListedChildren bounds Run.ChildInstanceIDs.
	MaxListedChildren = 100
)

// Properties of the link row (the head's of child runs are in head_child.go).
const (
	pChild, pInto = "Child", "Into" // link row: the child's id and Into field
)

// childRecheckMax bounds the time between two rechecks of a running child.
const childRecheckMax = time.Hour

// ChildInstanceID returns the instance id of the child run that step step of run parentID
// (generation gen, nonce) starts: "child~<parent id>~<gen>.<nonce>~<step>", or, when that is
// no valid instance id of at most 256 characters, "child~" and 40 hex digits of its SHA-256.
// It is the same for every attempt of the step and differs for a later run that reuses the
// parent's id (a new nonce).
func ChildInstanceID(parentID string, gen int64, nonce string, step int64) string {
	tail := "~" + itoa(max(gen, 1)) + "." + nonce + "~" + itoa(step)
	if id := ChildRunPrefix + parentID + tail; len(id) <= maxNameLength && ValidInstanceID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(parentID + "\x00" + tail))
	return ChildRunPrefix + hex.EncodeToString(sum[:20])
}

// ChildAwaitedError reports a purge of a finished child run whose parent still waits for it:
// the parent reads the child's result from the child's head, so the child stays until its
// parent has gone on.
type ChildAwaitedError struct {
	// InstanceID is the child run's id.
	InstanceID string
	// Status is the child run's status.
	Status RunStatus
	// ParentInstanceID is the parent run's id.
	ParentInstanceID string
}

// Error names the child and its parent.
func (e *ChildAwaitedError) Error() string {
	return fmt.Sprintf("engine: instance %q is awaited by its parent run %q", e.InstanceID, e.ParentInstanceID)
}

// childTakenError reports a child's id held by a run that is not the child.
type childTakenError struct{ id string }

func (e *childTakenError) Error() string {
	return fmt.Sprintf("instance id '%s' is taken by another run", e.id)
}

// childLink ties a starting child run to its parent (startRun), and places it in the
// parent's family: one level deeper, the same root, one run more.
type childLink struct {
	parent, nonce string
	depth         int64
	root          string
	family        int64
}

// linkTo returns the link of a child that h starts.
func linkTo(h *head) *childLink {
	return &childLink{parent: h.runID, nonce: h.nonce, depth: h.depth + 1, root: h.familyRoot(), family: h.familyRuns() + 1}
}

// tie records the link on the child's head; nil ties nothing.
func (l *childLink) tie(h *head) {
	if l != nil {
		h.parent, h.parentNonce = l.parent, l.nonce
		h.depth, h.root, h.family = l.depth, l.root, l.family
	}
}

// familyRoot returns the id of the root run of h's family (h's own for a root).
func (h *head) familyRoot() string {
	if h.root != "" {
		return h.root
	}
	return h.runID
}

// familyRuns returns how many runs of h's family had started as far as h knows, h included.
func (h *head) familyRuns() int64 { return max(h.family, 1) }

// childWait reports whether h waits for a child run: its awaited name is the id of the child
// its current step started. No event can carry that name: it holds the run's nonce.
func (h *head) childWait() bool {
	return strings.HasPrefix(h.waiting, ChildRunPrefix) && h.waiting == ChildInstanceID(h.runID, h.gen, h.nonce, h.step)
}

// awaited returns the child run h waits for, or waited for when it finished (a failure or a
// cancel ends the run at the step after its wait, which keeps the child's id), or "".
func (h *head) awaited() string {
	switch {
	case h.childWait():
		return h.waiting
	case !h.active() && strings.HasPrefix(h.waiting, ChildRunPrefix) && h.waiting == ChildInstanceID(h.runID, h.gen, h.nonce, h.step-1):
		return h.waiting
	}
	return ""
}

// linkKey is the row key of the link row of the child that step of generation gen started.
func linkKey(gen, step int64) string { return seqKey('l', gen, step) }

// childStarted is a visit whose route starts a child run: the run waits for the child
// (Waiting holds the child's id, WaitDeadline the first recheck), and the commit inserts the
// link row. Once stored, the child is started (proceed).
type childStarted struct {
	visited
	recheck time.Duration // until the first recheck: Options.RepairAfter
}

// childVisit is the outcome of visit v of h, whose route starts a child run: the run's
// failure when the child cannot start (checkChild).
func (e *Engine) childVisit(h *head, v visited) outcome {
	if f, bad := e.checkChild(h, &v); bad {
		return f
	}
	return &childStarted{visited: v, recheck: e.opts.RepairAfter}
}

func (o *childStarted) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, base, d := c.n, c.base, o.decision
	id := ChildInstanceID(base.runID, base.gen, base.nonce, n.step)
	n.waiting, n.resume, n.runnable = id, d.ResumeNode, false
	n.waitDeadline, n.waitTimeout, n.timeoutNode = c.now.Add(o.recheck).UnixNano(), 0, ""
	n.children++
	n.custom = childWaitingStatus(base, o.node, id, d.ResumeNode)
	c.row(HistoryChildStarted, OrchestratorName, o.node, jsonObject(
		"child_instance_id", jstr(id), "graph_name", jstr(d.Child.Graph), "resume_node", jstr(d.ResumeNode), "into", jnull(d.Child.Into)))
}

// addOps inserts the link row of the child.
func (o *childStarted) addOps(c *commitBuilder) {
	ch, base, n := o.decision.Child, c.base, c.n
	c.ops = append(c.ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: base.runID, RowKey: linkKey(base.gen, n.step), Properties: map[string]any{
		pChild: n.waiting, pGraph: ch.Graph, pData: string(ch.Input), pInto: ch.Into, pTime: c.now, pWriteID: c.writeID,
	}}})
}

// proceed starts the child n waits for.
func (o *childStarted) proceed(ctx context.Context, e *Engine, n *head) (*head, bool, error) {
	if n.childWait() {
		return e.childStarting(ctx, n, o.decision.Child)
	}
	return e.proceed(ctx, n)
}

// childResumed is a run resuming after its child completed: the child's final state is in
// the Into field, and the run continues at the resume node.
type childResumed struct {
	node, child, into string
	state             json.RawMessage
	family            int64 // the family's runs the child knew of (child.go)
}

func (o *childResumed) stepNode() string { return o.node }

func (o *childResumed) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	c.setState(o.state)
	n.node, n.childDone = base.resume, o.child
	n.family = max(n.family, o.family)
	n.waiting, n.resume, n.waitDeadline = "", "", 0
	n.waitTimeout, n.timeoutNode = 0, ""
	n.custom = customStatus(base, base.resume)
	n.runnable = true
	c.row(HistoryChildCompleted, OrchestratorName, base.resume, c.stateData(
		"child_instance_id", jstr(o.child), "into", jnull(o.into)))
}

// childFailed is a run taking the failure route (to) of the node that started a child run,
// as after a handler's failure: its child failed or was terminated (the wait ends, and the
// run learns of the family's runs the child knew of), or the child would pass its family's
// bounds (state holds what the node produced, a visit that counts). A node_failed row records
// the cause, and the failure node sees it (StepInfo.Failure).
type childFailed struct {
	node, to, cause string
	family          int64
	state           json.RawMessage // the visit's, when the child was refused before its start
	emitted         []graphrun.EmittedEvent
}

func (o *childFailed) stepNode() string { return o.node }

func (o *childFailed) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	if o.state != nil {
		n.visits++
		c.setState(o.state)
		c.row(HistoryNodeCompleted, ExecuteNodeName, o.node, c.stateData())
		c.emit(o.emitted, o.node)
	}
	n.family = max(n.family, o.family)
	n.timedOut, n.childDone = "", ""
	n.attempt, n.notBefore = 0, 0
	n.waiting, n.resume, n.waitDeadline = "", "", 0
	n.waitTimeout, n.timeoutNode = 0, ""
	n.status = StatusRunning
	n.node = o.to
	n.failure = nodeFailureJSON(o.node, o.cause)
	n.custom = customStatus(base, o.to)
	n.runnable = true
	c.row(HistoryNodeFailed, OrchestratorName, o.node, jsonObject("error", jstr(o.cause), "failure_node", jstr(o.to)))
}

// childWaitingStatus returns the custom status of a run waiting for a child run after node.
func childWaitingStatus(h *head, node, child, resume string) string {
	var buf [512]byte
	b := graphKeys(append(buf[:0], '{'), h)
	b = jsonStr(b, "current_node", node)
	b = jsonStr(b, "waiting_for_child", child)
	b = jsonStr(b, "resume_node", resume)
	return string(append(b, '}'))
}

// checkChild checks a child run visit v of h decided to start before the visit commits: its
// graph registered, its input a valid initial state of it, and its family within its bounds
// (familyBound). A child that cannot start fails the run at this step (failChild), keeping the
// state the node produced; one past its family's bounds takes the node's failure route
// instead, when it has one.
func (e *Engine) checkChild(h *head, v *visited) (outcome, bool) {
	c := v.decision.Child
	g, err := e.reg.Latest(c.Graph)
	if err == nil && !ValidGraphName(g.Manifest().GraphName) {
		err = ErrInvalidGraphName
	}
	var input json.RawMessage
	if err == nil {
		input, err = normalizeObject(c.Input)
	}
	if sc, ok := graphrun.Of(g).(graphrun.StateChecker); ok && err == nil {
		err = sc.CheckState(input)
	}
	if err != nil {
		f := e.failChild(h, h.node, v.state, startCause(c.Graph, err))
		f.emitted = v.emitted
		return f, true
	}
	if cause := e.familyBound(h, c.Graph); cause != "" {
		if to := e.failureNode(h, h.node); to != "" {
			e.log.Warn("child run refused: taking the failure route", "run_id", h.runID, "node", h.node, "failure_node", to, "error", cause)
			return &childFailed{node: h.node, to: to, cause: cause, state: v.state, emitted: v.emitted}, true
		}
		f := e.failChild(h, h.node, v.state, cause)
		f.emitted = v.emitted
		return f, true
	}
	return nil, false
}

// familyBound returns why h may not start a child run of graph — the child would be deeper
// than Options.MaxChildDepth, or its family would pass Options.MaxFamilyRuns — or "". It reads
// only h: the depth and the count h's start and steps stored.
func (e *Engine) familyBound(h *head, graph string) string {
	if depth := h.depth + 1; depth > int64(e.opts.MaxChildDepth) {
		return fmt.Sprintf("cannot start child run of graph '%s': it would be %d levels below its family's root run '%s', past the limit of %d (MaxChildDepth)",
			graph, depth, h.familyRoot(), e.opts.MaxChildDepth)
	}
	if runs := h.familyRuns(); runs >= int64(e.opts.MaxFamilyRuns) {
		return fmt.Sprintf("cannot start child run of graph '%s': its family (root run '%s') has started %d runs, the limit (MaxFamilyRuns)",
			graph, h.familyRoot(), runs)
	}
	return ""
}

// failureNode returns the failure route of node in the graph version of h's run ("": none).
func (e *Engine) failureNode(h *head, node string) string {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		return ""
	}
	return nodePolicy(g, node).FailureNode
}

// startCause is the failure of a parent whose child run of graph could not start with err.
func startCause(graph string, err error) string {
	var taken *childTakenError
	switch {
	case errors.Is(err, durable.ErrUnknownGraph):
		return fmt.Sprintf("cannot start child run: unknown graph '%s'", graph)
	case errors.As(err, &taken):
		return "cannot start child run: " + taken.Error()
	case errors.Is(err, durable.ErrInvalidState):
		return fmt.Sprintf("cannot start child run of graph '%s': invalid input: %v", graph, err)
	case errors.Is(err, ErrStorageFull):
		return fmt.Sprintf("cannot start child run of graph '%s': the run store is full (its memory budget)", graph)
	case errors.Is(err, ErrInvalidRunInput):
		return fmt.Sprintf("cannot start child run of graph '%s': its input must be a JSON object", graph)
	}
	return fmt.Sprintf("cannot start child run of graph '%s': %v", graph, err)
}

// childRefused reports a child start that failed for good: any retry would fail alike.
func childRefused(err error) bool {
	var taken *childTakenError
	return errors.As(err, &taken) || errors.Is(err, durable.ErrUnknownGraph) || errors.Is(err, durable.ErrInvalidState) ||
		errors.Is(err, ErrInvalidRunInput) || errors.Is(err, ErrInvalidInstanceID) || errors.Is(err, ErrInvalidGraphName) || refused(err)
}

// failChild is the outcome of a step whose child run could not start or did not complete: the
// run fails with "orchestrator failed: <cause>" at node, keeping state (the node's new state;
// nil when the node did not run). A child that failed or was terminated (childLost), or that
// would pass its family's bounds (checkChild), takes the node's failure route instead, when
// it has one.
func (e *Engine) failChild(h *head, node string, state json.RawMessage, cause string) *runFailed {
	e.log.Warn("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
	o := failure("orchestrator", OrchestratorName, cause)
	o.node, o.state = node, state
	return o
}

// childStarting starts the child of n, the head whose commit made the run wait for it, and
// puts the first recheck on the queue. A start refused for good is left to the next step of
// the wait (more), which finds no child, is refused again and fails the run with the reason;
// any other failure is left to the recheck.
func (e *Engine) childStarting(ctx context.Context, n *head, c *durable.ChildRun) (*head, bool, error) {
	err := e.startChild(ctx, n, c.Graph, c.Input)
	if err != nil && childRefused(err) {
		return n, true, nil
	}
	if err != nil {
		e.log.Warn("start child run: left to the parent's recheck", "run_id", n.runID, "child_id", n.waiting, "error", err.Error())
	}
	return n, false, e.dispatch(context.WithoutCancel(ctx), n, time.Duration(n.waitDeadline-e.clock().UnixNano()))
}

// startChild starts the child h waits for, insert-only (startRun with a link). Its metadata
// names the parent and carries the parent's owner, so the child is the same caller's run, and
// its start is billed to that owner as new work (BilledTo): a store with a budget counts the
// family's runs against the root owner's share and refuses a child past the room new work may
// take, which fails the parent with the reason (childRefused) as any refused start.
// Once the child is stored the parent is read again: a parent cancelled (or otherwise
// finished, or purged) since it stored its wait found no child to cancel, so the child is
// cancelled here.
func (e *Engine) startChild(ctx context.Context, h *head, graph string, input json.RawMessage) error {
	meta := []string{"parent_instance_id", jstr(h.runID)}
	if h.owner != "" {
		meta = append(meta, MetadataOwnerKey, jstr(h.owner))
	}
	_, err := e.startRun(BilledTo(ctx, h.owner), StartRunRequest{GraphName: graph, InstanceID: h.waiting, Input: input, Metadata: json.RawMessage(jsonObject(meta...))},
		linkTo(h))
	if err != nil {
		return err
	}
	p, err := e.getHead(ctx, h.runID)
	var reason string
	switch {
	case errors.Is(err, ErrNotFound) || err == nil && p.nonce != h.nonce:
		reason = fmt.Sprintf("parent run '%s' was purged before its child started", h.runID)
	case err == nil && !p.active():
		reason = fmt.Sprintf("parent run '%s' finished (%s) before its child started", h.runID, p.status)
	case err != nil:
		e.log.Warn("start child run: read the parent again", "run_id", h.runID, "error", err.Error())
	}
	if reason != "" {
		var finished *RunFinishedError
		if err := e.CancelRun(context.WithoutCancel(ctx), h.waiting, reason); err != nil && !errors.Is(err, ErrRunNotFound) && !errors.As(err, &finished) {
			e.log.Warn("cancel the child of a finished parent", "run_id", h.runID, "child_id", h.waiting, "error", err.Error())
		}
	}
	return nil
}

// existingChild settles a child start that met a head holding its id (cur; h is the start's
// own): the child itself, started by an earlier attempt, is reported started (and dispatched
// again while Pending: a duplicate item is harmless); another run makes the start fail for
// good. The start's own due and index rows go, unless its index rows are the child's (an
// attempt at the same instant has the same keys).
func (e *Engine) existingChild(ctx context.Context, h, cur *head, link *childLink, abandon func(), due dueRow) (Run, error) {
	if h.indexRef().rowKey != cur.indexRef().rowKey {
		abandon()
	} else {
		e.clearDue(ctx, due)
	}
	if cur.parent != link.parent || cur.parentNonce != link.nonce {
		return Run{}, &childTakenError{id: cur.runID}
	}
	if cur.status == StatusPending {
		if err := e.dispatch(ctx, cur, 0); err != nil {
			e.log.Warn("start child run: dispatch failed; left to the repair pass", "run_id", cur.runID, "error", err.Error())
		}
	}
	return cur.run(), nil
}
