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
//   - Reaching the family (child_links.go). Cancelling a parent cancels the child it waits
//     for; purging a parent purges its children first. A finished child its parent still
//     waits for is never purged (*ChildAwaitedError): the parent would take its absence for
//     a child that was never started.
//
// Cost, beyond an ordinary step: the starting step's batch carries two rows more; the start
// of the child is a start (3 T + 1 Q, its index rows) and a read of the parent; its notice is 4
// T (the parent's head read, a due row written and deleted, the batch) + 1 Q; the resuming step reads the child's head and the link row (and the output
// payload of a large one) before its one batch; each recheck while the child runs is 1 Q and
// 1 T read. A status read of a run that started children adds one query of its link rows.
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

// childLink ties a starting child run to its parent (startRun).
type childLink struct{ parent, nonce string }

// tie records the link on the child's head; nil ties nothing.
func (l *childLink) tie(h *head) {
	if l != nil {
		h.parent, h.parentNonce = l.parent, l.nonce
	}
}

// childWait reports whether h waits for a child run: its awaited name is the id of the child
// its current step started. No event can carry that name: it holds the run's nonce.
func (h *head) childWait() bool {
	return strings.HasPrefix(h.waiting, ChildRunPrefix) && h.waiting == ChildInstanceID(h.runID, h.gen, h.nonce, h.step)
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
	if f, bad := e.checkChild(h, v.decision.Child, v.state); bad {
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
}

func (o *childResumed) stepNode() string { return o.node }

func (o *childResumed) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	c.setState(o.state)
	n.node, n.childDone = base.resume, o.child
	n.waiting, n.resume, n.waitDeadline = "", "", 0
	n.waitTimeout, n.timeoutNode = 0, ""
	n.custom = customStatus(base, base.resume)
	n.runnable = true
	c.row(HistoryChildCompleted, OrchestratorName, base.resume, jsonObject(
		"child_instance_id", jstr(o.child), "into", jnull(o.into), "state", n.stateJSON))
}

// childFailed is a run whose child run failed or was terminated, taking the failure route of
// the node that started it (to): the wait ends, a node_failed row records the cause, and the
// failure node sees it (StepInfo.Failure), as after a handler's failure.
type childFailed struct {
	node, to, cause string
}

func (o *childFailed) stepNode() string { return o.node }

func (o *childFailed) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
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

// checkChild checks a child run a visit of h decided to start before the visit commits: its
// graph registered, its input a valid initial state of it. A child that cannot start fails
// the run at this step (failChild), with state, the state the node produced.
func (e *Engine) checkChild(h *head, c *durable.ChildRun, state json.RawMessage) (outcome, bool) {
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
		return e.failChild(h, h.node, state, startCause(c.Graph, err)), true
	}
	return nil, false
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
// nil when the node did not run). A child that failed or was terminated takes the node's
// failure route instead, when it has one (childLost).
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
// names the parent and carries the parent's owner, so the child is the same caller's run.
// Once the child is stored the parent is read again: a parent cancelled (or otherwise
// finished, or purged) since it stored its wait found no child to cancel, so the child is
// cancelled here.
func (e *Engine) startChild(ctx context.Context, h *head, graph string, input json.RawMessage) error {
	meta := []string{"parent_instance_id", jstr(h.runID)}
	if h.owner != "" {
		meta = append(meta, MetadataOwnerKey, jstr(h.owner))
	}
	_, err := e.startRun(ctx, StartRunRequest{GraphName: graph, InstanceID: h.waiting, Input: input, Metadata: json.RawMessage(jsonObject(meta...))},
		&childLink{parent: h.runID, nonce: h.nonce})
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
