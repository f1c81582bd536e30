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
//   - Finishing. The commit that finishes a child (and a cancel of it) raises the event
//     named after the child's id on its parent, only while the parent waits for it
//     (RaiseEvent's notice option, in its batch conditioned on the parent's head: one notice
//     per wait); the event wakes the parent. Nobody else can raise it: the parent's graph
//     has no handler of that name. Whatever wakes the parent, its notice or its
//     recheck timer, it point-reads the child's head and believes only that: a completed
//     child resumes it (one batch: child_completed history row, the child's final state in
//     the Into field, the notice consumed), a failed or terminated child fails it. A notice
//     that never came (the child's worker died after its last commit) is made up for by the
//     recheck, due RepairAfter after the start, then every half of the child's age, at
//     least hourly.
//   - Reaching the family (child_links.go). Cancelling a parent cancels the child it waits
//     for; purging a parent purges its children first. A finished child its parent still
//     waits for is never purged (*ChildAwaitedError): the parent would take its absence for
//     a child that was never started.
//
// Cost, beyond an ordinary step: the starting step's batch carries two rows more; the start
// of the child is a start (3 T + 1 Q, its index rows) and a read of the parent; its notice is an event that wakes (4
// T + 1 Q); the resuming step reads the child's head and the link row (and the output
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
	// MaxListedChildren bounds Run.ChildInstanceIDs.
	MaxListedChildren = 100
)

// Head properties of child runs (head.go keeps the fields), and the link row's.
const (
	pParent, pParentNonce = "Parent", "ParentNonce" // a child's parent run
	pChildren, pChildDone = "Children", "ChildDone" // a parent's count, and its last completed child
	pChild, pInto         = "Child", "Into"         // link row: the child's id and Into field
)

// outChild is the step kind (stepOutcome.kind) of a run resuming after its child completed.
const outChild = 32

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

// childEnd is what outChild commits: the child and the field its final state went into.
type childEnd struct{ id, into string }

// childLink ties a starting child run to its parent (startRun).
type childLink struct{ parent, nonce string }

// tie records the link on the child's head; nil ties nothing.
func (l *childLink) tie(h *head) {
	if l != nil {
		h.parent, h.parentNonce = l.parent, l.nonce
	}
}

// setChildProp sets the child-run field of h that property name holds (head.set).
func (h *head) setChildProp(name string, v any) {
	switch name {
	case pParent:
		h.parent, _ = v.(string)
	case pParentNonce:
		h.parentNonce, _ = v.(string)
	case pChildren:
		h.children = asInt64(v)
	case pChildDone:
		h.childDone, _ = v.(string)
	}
}

// childProps adds to a start's properties the parent of a child run (head.allProps).
func (h *head) childProps(p map[string]any) {
	if h.parent != "" {
		p[pParent], p[pParentNonce] = h.parent, h.parentNonce
	}
}

// childChanges adds to a step's head merge the child-run fields it changed
// (head.changedProps).
func (h *head) childChanges(base *head, p map[string]any) {
	if h.children != base.children {
		p[pChildren] = h.children
	}
	if h.childDone != base.childDone {
		p[pChildDone] = h.childDone
	}
}

// childWait reports whether h waits for a child run: its awaited name is the id of the child
// its current step started. No event can carry that name: it holds the run's nonce.
func (h *head) childWait() bool {
	return strings.HasPrefix(h.waiting, ChildRunPrefix) && h.waiting == ChildInstanceID(h.runID, h.gen, h.nonce, h.step)
}

// linkKey is the row key of the link row of the child that step of generation gen started.
func linkKey(gen, step int64) string { return seqKey('l', gen, step) }

// childCommit adds to a commit (buildCommit) what child runs change: a visit that starts a
// child makes the run wait for it, outChild resumes the run, and any other visit forgets the
// last completed child.
func (e *Engine) childCommit(base, n *head, o *stepOutcome, now time.Time, rows []histRow) []histRow {
	switch {
	case o.kind == outVisit && o.decision.Action == durable.ActionChild:
		d := o.decision
		id := ChildInstanceID(base.runID, base.gen, base.nonce, n.step)
		n.childDone = ""
		n.waiting, n.resume, n.runnable = id, d.ResumeNode, false
		n.waitDeadline, n.waitTimeout, n.timeoutNode = now.Add(e.opts.RepairAfter).UnixNano(), 0, ""
		n.children++
		n.custom = childWaitingStatus(base, o.node, id, d.ResumeNode)
		rows = append(rows, histRow{typ: HistoryChildStarted, name: OrchestratorName, node: o.node, data: jsonObject(
			"child_instance_id", jstr(id), "graph_name", jstr(d.Child.Graph), "resume_node", jstr(d.ResumeNode), "into", jnull(d.Child.Into))})
	case o.kind == outVisit:
		n.childDone = ""
	case o.kind == outChild:
		n.step++
		n.stateVal = o.state
		n.stateJSON, n.stateRef = string(o.state), ""
		n.node, n.childDone = base.resume, o.child.id
		n.waiting, n.resume, n.waitDeadline = "", "", 0
		n.waitTimeout, n.timeoutNode = 0, ""
		if o.inboxRow != "" {
			n.pending--
		}
		n.custom = customStatus(base, base.resume)
		n.runnable = true
		rows = append(rows, histRow{typ: HistoryChildCompleted, name: OrchestratorName, node: base.resume, data: jsonObject(
			"child_instance_id", jstr(o.child.id), "into", jnull(o.child.into), "state", n.stateJSON)})
	}
	return rows
}

// childOps adds to a commit's batch (buildCommit) the link row of a child it starts, or the
// deletion of the notice an outChild consumed.
func childOps(ops []Op, base, n *head, o *stepOutcome, now time.Time, writeID string) []Op {
	switch {
	case o.kind == outVisit && o.decision.Action == durable.ActionChild:
		c := o.decision.Child
		ops = append(ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: base.runID, RowKey: linkKey(base.gen, n.step), Properties: map[string]any{
			pChild: n.waiting, pGraph: c.Graph, pData: string(c.Input), pInto: c.Into, pTime: now, pWriteID: writeID,
		}}})
	case o.kind == outChild && o.inboxRow != "":
		ops = append(ops, Op{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: base.runID, RowKey: o.inboxRow}})
	}
	return ops
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
func (e *Engine) checkChild(h *head, c *durable.ChildRun, state json.RawMessage) (stepOutcome, bool) {
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
	return stepOutcome{}, false
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
// nil when the node did not run). It is the one place where a failure route of node would
// send the run on instead.
func (e *Engine) failChild(h *head, node string, state json.RawMessage, cause string) stepOutcome {
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

// childWait is the step of a run waiting for its child, whatever woke it (the child's notice
// or the recheck timer): it reads the child's head and believes only that. A child that never
// started is started; a running one gets the next recheck (wait: nothing to commit); a
// finished one resumes or fails the run.
func (e *Engine) childWait(ctx context.Context, h *head) (o stepOutcome, wait bool, err error) {
	id := h.waiting
	ch, err := e.getHead(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return e.childMissing(ctx, h)
	case err != nil:
		return stepOutcome{}, false, fmt.Errorf("read child run %s of run %s: %w", id, h.runID, err)
	case ch.parent != h.runID || ch.parentNonce != h.nonce:
		return e.failChild(h, h.node, nil, startCause(ch.graph, &childTakenError{id: id})), false, nil
	case ch.active():
		return stepOutcome{}, true, e.recheck(ctx, h, ch.created)
	}
	return e.childFinished(ctx, h, ch)
}

// childMissing starts the child h waits for, which has no head: the worker that stored the
// wait died before starting it (a child is never purged while its parent waits for it).
func (e *Engine) childMissing(ctx context.Context, h *head) (stepOutcome, bool, error) {
	l, err := e.readLink(ctx, h)
	if errors.Is(err, ErrNotFound) {
		return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' has no link row in its parent run", h.waiting)), false, nil
	}
	if err != nil {
		return stepOutcome{}, false, err
	}
	if err := e.startChild(ctx, h, l.graph, l.input); err != nil {
		if childRefused(err) {
			return e.failChild(h, h.node, nil, startCause(l.graph, err)), false, nil
		}
		return stepOutcome{}, false, fmt.Errorf("start child run %s of run %s: %w", h.waiting, h.runID, err)
	}
	e.log.Info("started a child run its parent's worker had left unstarted", "run_id", h.runID, "child_id", h.waiting)
	return stepOutcome{}, true, e.recheck(ctx, h, e.clock())
}

// recheck puts the next look at h's running child on the queue: half the child's age after
// now, within RepairAfter..childRecheckMax. A recheck commits nothing, so a redelivered one
// releases the hold its start took (workitem.go): a long wait never adds up redeliveries
// into a poison failure.
func (e *Engine) recheck(ctx context.Context, h *head, since time.Time) error {
	ctx = context.WithoutCancel(ctx)
	d := min(max(e.clock().Sub(since)/2, e.opts.RepairAfter), childRecheckMax)
	return e.dispatch(ctx, h, d)
}

// childFinished resumes h after its finished child ch: a completed child's final state goes
// into the Into field and the run continues at the resume node, consuming the child's notice
// if it came; a failed or terminated child fails the run.
func (e *Engine) childFinished(ctx context.Context, h *head, ch *head) (stepOutcome, bool, error) {
	id := h.waiting
	out, err := e.readSpilled(ctx, ch.outputJSON, ch.outputRef)
	if err != nil {
		return stepOutcome{}, false, fmt.Errorf("read output of child run %s: %w", id, err)
	}
	if ch.status != StatusCompleted {
		var msg string
		if json.Unmarshal([]byte(out), &msg) != nil {
			msg = out
		}
		verb := "failed"
		if ch.status == StatusTerminated {
			verb = "was terminated"
		}
		return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' of graph '%s' %s: %s", id, ch.graph, verb, msg)), false, nil
	}
	l, err := e.readLink(ctx, h)
	if errors.Is(err, ErrNotFound) {
		return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' has no link row in its parent run", id)), false, nil
	}
	if err != nil {
		return stepOutcome{}, false, err
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return stepOutcome{}, false, err
	}
	if l.into != "" {
		var res struct {
			State json.RawMessage `json:"state"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.State) == 0 {
			return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' completed without a final state", id)), false, nil
		}
		if state, err = e.setField(ctx, h, state, l.into, res.State); err != nil {
			if ctx.Err() != nil || errors.Is(err, errVersionUnavailable) {
				return stepOutcome{}, false, err
			}
			return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' completed, but its final state does not fit state field '%s': %v", id, l.into, err)), false, nil
		}
	}
	o := stepOutcome{kind: outChild, node: h.node, state: state, child: &childEnd{id: id, into: l.into}}
	ev, found, err := e.findEvent(ctx, h, id)
	if err != nil {
		return stepOutcome{}, false, err
	}
	if found {
		o.inboxRow, o.inboxSeq = ev.RowKey, parseSeq(ev.RowKey)
	}
	return o, false, nil
}

// setField sets field of state to value through h's graph (graphrun.ChildOutputSetter), or as
// a member of the state object for a graph without it.
func (e *Engine) setField(ctx context.Context, h *head, state json.RawMessage, field string, value json.RawMessage) (json.RawMessage, error) {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errVersionUnavailable, err)
	}
	if s, ok := graphrun.Of(g).(graphrun.ChildOutputSetter); ok {
		return s.SetStateField(ctx, state, field, value)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(state, &m); err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	m[field] = value
	return json.Marshal(m)
}

// rebaseChild re-reads, when an outChild commit is rebased on fresh (a head that events
// changed), whether the child's notice is among the new events, so the commit consumes it.
func (e *Engine) rebaseChild(ctx context.Context, base, fresh *head, o *stepOutcome) error {
	if o.kind != outChild || o.inboxRow != "" || fresh.pending <= base.pending {
		return nil
	}
	ev, found, err := e.findEvent(ctx, fresh, o.child.id)
	if err != nil {
		return err
	}
	if found {
		o.inboxRow, o.inboxSeq = ev.RowKey, parseSeq(ev.RowKey)
	}
	return nil
}

// link is a child's link row: what its parent started it with.
type link struct {
	graph, into string
	input       json.RawMessage
}

// readLink reads the link row of the child h waits for. Errors: ErrNotFound (wrapped).
func (e *Engine) readLink(ctx context.Context, h *head) (link, error) {
	ent, err := e.store.Get(ctx, h.runID, linkKey(h.gen, h.step))
	if err != nil {
		return link{}, fmt.Errorf("read child link of run %s: %w", h.runID, err)
	}
	p := ent.Properties
	in, err := e.readSpilled(ctx, str(p, pData), str(p, pData+refSuffix))
	if err != nil {
		return link{}, fmt.Errorf("read child input of run %s: %w", h.runID, err)
	}
	return link{graph: str(p, pGraph), into: str(p, pInto), input: json.RawMessage(in)}, nil
}
