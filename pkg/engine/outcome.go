package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Step outcomes. A step's activities (a node visit, an applied event, a join…) produce an
// outcome, one small type per kind of step, before anything is written. Building the commit
// from it is pure (buildCommit), so a commit that lost a race against an event can be rebuilt
// on the fresh head without running user code again. Each type lives with its feature:
//
//	outcome.go     the interface, the commit builder, and the core kinds: a node visit
//	               (visited) that routes next (routedNext), completes (completed) or waits
//	               (waitStarted); an event applied (eventApplied) or refused (eventRefused);
//	               a wait timed out (waitTimedOut); the run failed (runFailed)
//	nodepolicy.go  retryScheduled, failureRouted
//	sleep.go       slept
//	branch.go      fannedOut, joined
//	child.go       childStarted, childResumed, childFailed
//	hold.go        begun
//
// An outcome may add to its commit through the optional interfaces below: batch operations
// after its history rows (opWriter), a check of the fresh head before a rebase (rebaser),
// events left in the inbox when it finishes its run (finisher), and its own continuation
// once stored (continuer).

// outcome is what one step produced, to be committed.
type outcome interface {
	// apply builds the next head (c.n, a copy of c.base) and appends the step's history rows.
	apply(c *commitBuilder)
	// stepNode is the node the step visited or acted at; "" for a step at no node.
	stepNode() string
}

// opWriter is an outcome that adds batch operations after its head merge and history rows
// (c.ops holds them when addOps runs).
type opWriter interface {
	addOps(c *commitBuilder)
}

// rebaser is an outcome that checks fresh, the head another writer changed only by raised
// events, before it is rebuilt on it (base is the head it was built on). A non-nil error
// ends the commit: errDropped drops the step, *restepError recomputes it, anything else is
// an infrastructure failure.
type rebaser interface {
	rebase(ctx context.Context, e *Engine, base, fresh *head) error
}

// finisher is an outcome that finishes its run: its commit lists the inbox events that were
// never applied (unapplied.go).
type finisher interface {
	leftovers() *leftovers
}

// continuer is an outcome with its own continuation once its commit is stored: it returns
// what runStep returns (proceed is the common continuation).
type continuer interface {
	proceed(ctx context.Context, e *Engine, n *head) (next *head, more bool, err error)
}

// commitBuilder is one commit in the making: the head it is conditioned on, the next head,
// and the history rows and batch operations the outcome adds.
type commitBuilder struct {
	base, n *head
	now     time.Time
	writeID string
	// form is how the rows record the state (stateData): nil, whole.
	form *stateRows
	rows []histRow
	// emitted are the events the step's handlers emitted, written before the step's rows
	// (emitted.go); emitNode is their node when the step writes no row.
	emitted  []graphrun.EmittedEvent
	emitNode string
	// ops is the batch, filled once the rows are final (opWriter.addOps).
	ops    []Op
	rowBuf [3]histRow
}

// row appends a history row.
func (c *commitBuilder) row(typ, name any, node, data string) {
	c.rows = append(c.rows, histRow{typ: typ, name: name, node: node, data: data})
}

// setState makes s the next head's state.
func (c *commitBuilder) setState(s json.RawMessage) {
	c.n.stateVal = s
	c.n.stateJSON, c.n.stateRef = string(s), ""
}

// emit records the events the step's handlers emitted at node.
func (c *commitBuilder) emit(evs []graphrun.EmittedEvent, node string) {
	c.emitted, c.emitNode = evs, node
}

// buildCommit turns an outcome into the next head and the batch that writes it: a merge of
// the head conditioned on base's ETag plus the history rows it summarises (and the
// operations of its kind: a consumed inbox row, a fan-out's fence, a child's link), stamped
// with writeID; its rows record the state as form says (nil: whole). It is pure.
func buildCommit(base *head, o outcome, now time.Time, writeID string, form *stateRows) (*head, []Op) {
	c := &commitBuilder{base: base, n: base.clone(), now: now, writeID: writeID, form: form}
	n := c.n
	n.updated, n.writeID, n.awaitVersion = now, writeID, false
	n.restarts = 0 // a commit ends the step: its deaths no longer count, nobody holds it
	n.holder, n.holdUntil = "", 0
	c.rows = c.rowBuf[:0]
	o.apply(c)
	rows := emittedRows(c.rows, c.emitted, c.emitNode)
	ops := make([]Op, 0, len(rows)+2)
	ops = append(ops, Op{Kind: OpMerge, IfMatch: base.etag, Entity: Entity{PartitionKey: base.runID, RowKey: headRowKey, Properties: n.changedProps(base)}})
	ops = historyOps(ops, base.runID, base.gen, base.histSeq, n.step, now, writeID, rows)
	n.histSeq = base.histSeq + int64(len(rows))
	if n.histSeq != base.histSeq {
		ops[0].Entity.Properties[pHistSeq] = n.histSeq
	}
	c.ops = ops
	if w, ok := o.(opWriter); ok {
		w.addOps(c)
	}
	if base.branchCount > 0 { // the step after a fan-out's: it may close the region (branch.go)
		closeRegion(c)
	}
	return n, c.ops
}

// inboxDelete is the op that consumes inbox row rk of run runID.
func inboxDelete(runID, rk string) Op {
	return Op{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: runID, RowKey: rk}}
}

// visited is a node visit whose node ran and whose route resolved: what every visit commits
// (node_completed and route_resolved rows, the new state), whatever its decision. The
// decision's own part is the type that embeds it; visited alone commits a decision of no
// known action.
type visited struct {
	node     string
	state    json.RawMessage
	decision durable.RouteDecision
	emitted  []graphrun.EmittedEvent // written before the step's rows (emitted.go)
}

func (v *visited) stepNode() string { return v.node }

// visitOf returns the visit part of an outcome that embeds it.
func (v *visited) visitOf() *visited { return v }

// isVisit reports whether o is a node visit's outcome (visited, or a type embedding it).
func isVisit(o outcome) bool {
	_, ok := o.(interface{ visitOf() *visited })
	return ok
}

func (v *visited) apply(c *commitBuilder) {
	n := c.n
	n.step++
	n.visits++
	n.timedOut, n.failure = "", ""
	n.attempt, n.notBefore = 0, 0
	n.status = StatusRunning
	n.childDone = ""  // the last completed child led to the node just visited, no further
	n.reroute = false // a rewound route is resolved (rewind.go)
	c.setState(v.state)
	if !c.base.reroute { // a rewound route's node committed its completion before (rewind.go)
		c.row(HistoryNodeCompleted, ExecuteNodeName, v.node, c.stateData())
	}
	c.row(HistoryRouteResolved, ResolveRouteName, v.node, decisionJSON(v.decision))
	c.emit(v.emitted, v.node)
}

// routedNext is a visit whose route goes on to the next node.
type routedNext struct{ visited }

func (o *routedNext) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, next := c.n, o.decision.NextNode
	n.node = next
	n.custom = customStatus(c.base, next)
	n.runnable = true
}

// completed is a visit whose route completes the run.
type completed struct {
	visited
	left leftovers
}

func (o *completed) leftovers() *leftovers { return &o.left }

func (o *completed) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, base := c.n, c.base
	n.status = StatusCompleted
	n.outputJSON, n.outputRef = completedOutput(base, o.node, n.stateJSON), ""
	n.custom = customStatus(base, o.node)
	n.runnable = false
	c.rows = notAppliedRows(c.rows, o.left.evs, o.left.more, o.node)
	c.row(HistoryRunCompleted, OrchestratorName, o.node, c.completedData(o.node))
}

// waitStarted is a visit whose route waits for an event.
type waitStarted struct {
	visited
	// timeout is the wait's: the decision's own (RouteDecision.Within), else the policy's; 0
	// waits forever.
	timeout time.Duration
	// match: the awaited event is already in the inbox, so the run stays runnable.
	match bool
}

func (o *waitStarted) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, d := c.n, o.decision
	n.waiting, n.resume = d.EventName, d.ResumeNode
	n.custom = waitingStatus(c.base, o.node, d.EventName, d.ResumeNode)
	n.runnable = o.match
	data := []string{"event_name", jstr(d.EventName), "resume_node", jstr(d.ResumeNode)}
	if t := o.timeout; t > 0 {
		n.waitDeadline, n.waitTimeout, n.timeoutNode = c.now.Add(t).UnixNano(), int64(t), d.TimeoutNode
		data = append(data, "deadline", jstr(c.now.Add(t).UTC().Format(time.RFC3339Nano)))
		if d.TimeoutNode != "" {
			data = append(data, "timeout_node", jstr(d.TimeoutNode))
		}
	}
	c.row(HistoryWaitStarted, OrchestratorName, o.node, jsonObject(data...))
}

// rebase looks again for the awaited event among the events fresh received.
func (o *waitStarted) rebase(ctx context.Context, e *Engine, _, fresh *head) error {
	if fresh.pending <= 0 || o.match {
		return nil
	}
	_, found, err := e.findEvent(ctx, fresh, o.decision.EventName)
	if err != nil {
		return err
	}
	o.match = found
	return nil
}

// eventApplied is an inbox event the run's handler applied: the run resumes.
type eventApplied struct {
	state    json.RawMessage
	event    string
	inboxRow string
	inboxSeq int64
	emitted  []graphrun.EmittedEvent
}

func (o *eventApplied) stepNode() string { return "" }

func (o *eventApplied) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	c.setState(o.state)
	n.node = base.resume
	n.waiting, n.resume, n.waitDeadline = "", "", 0
	n.waitTimeout, n.timeoutNode = 0, ""
	n.pending--
	n.custom = customStatus(base, base.resume)
	n.runnable = true
	c.row(HistoryEventApplied, ApplyEventName, base.resume,
		c.stateData("event_name", jstr(o.event), "inbox_seq", itoa(o.inboxSeq)))
	c.emit(o.emitted, "")
}

func (o *eventApplied) addOps(c *commitBuilder) {
	c.ops = append(c.ops, inboxDelete(c.base.runID, o.inboxRow))
}

// eventRefused is an inbox event that failed its check: consumed, not applied; the wait goes
// on.
type eventRefused struct {
	event    string
	inboxRow string
	inboxSeq int64
	refusal  string
}

func (o *eventRefused) stepNode() string { return "" }

func (o *eventRefused) apply(c *commitBuilder) {
	n := c.n
	n.step++
	n.pending--
	n.runnable = n.pending > 0 // another event may carry the awaited name
	c.row(HistoryEventRefused, ApplyEventName, c.base.node,
		jsonObject("event_name", jstr(o.event), "inbox_seq", itoa(o.inboxSeq), "error", jstr(o.refusal)))
}

func (o *eventRefused) addOps(c *commitBuilder) {
	c.ops = append(c.ops, inboxDelete(c.base.runID, o.inboxRow))
}

// waitTimedOut is a wait whose deadline passed with no event: the run continues at next.
type waitTimedOut struct {
	node, event, next string
}

func (o *waitTimedOut) stepNode() string { return o.node }

func (o *waitTimedOut) apply(c *commitBuilder) {
	n := c.n
	n.step++
	n.node = o.next
	n.waiting, n.resume, n.waitDeadline = "", "", 0
	n.waitTimeout, n.timeoutNode, n.timedOut = 0, "", o.event
	n.custom = customStatus(c.base, o.next)
	n.runnable = true
	c.row(HistoryWaitTimedOut, OrchestratorName, o.node, jsonObject("event_name", jstr(o.event), "next_node", jstr(o.next)))
}

// rebase lets an event that reached the inbox before the timeout committed win.
func (o *waitTimedOut) rebase(ctx context.Context, e *Engine, _, fresh *head) error {
	return e.eventBeatsTimeout(ctx, fresh)
}

// eventBeatsTimeout returns a *restepError when fresh, the head a timeout was about to be
// committed on, received the awaited event meanwhile: the event wins.
func (e *Engine) eventBeatsTimeout(ctx context.Context, fresh *head) error {
	if fresh.pending <= 0 {
		return nil
	}
	if _, found, err := e.findEvent(ctx, fresh, fresh.waiting); err != nil {
		return err
	} else if found {
		return &restepError{fresh: fresh}
	}
	return nil
}

// runFailed is a step that fails the run with "<kind> failed: <cause>".
type runFailed struct {
	node  string
	state json.RawMessage // the node's new state, when it completed before its route failed
	// emitted: the events the completed node's handlers emitted.
	emitted    []graphrun.EmittedEvent
	name       string // fixed internal name of the failing step kind
	msg        string // "<kind> failed: <cause>", kind being execute_node, resolve_route, apply_event or orchestrator
	keepCustom bool   // orchestrator failures keep the last custom status
	// timedOut: the failure of a wait that timed out; an event that reaches the inbox before
	// it commits wins.
	timedOut bool
	left     leftovers
}

// failure returns the outcome of a step that fails the run with "<kind> failed: <cause>".
func failure(kind, name, cause string) *runFailed {
	return &runFailed{name: name, msg: kind + " failed: " + cause, keepCustom: kind == "orchestrator"}
}

func (o *runFailed) stepNode() string { return o.node }

func (o *runFailed) leftovers() *leftovers { return &o.left }

func (o *runFailed) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.step++
	if o.state != nil { // the node completed, then its route failed
		c.setState(o.state)
		c.row(HistoryNodeCompleted, ExecuteNodeName, o.node, c.stateData())
	}
	n.status = StatusFailed
	n.outputJSON, n.outputRef = jstr(o.msg), ""
	if !o.keepCustom && base.waiting == "" {
		n.custom = customStatus(base, base.node)
	}
	n.waitDeadline, n.notBefore = 0, 0
	n.runnable = false
	n.reroute = false
	c.rows = notAppliedRows(c.rows, o.left.evs, o.left.more, o.node)
	data := []string{"error", jstr(o.msg)}
	if from := rewindFrom(base, o.state != nil); from != "" { // where a rewind takes the run up (rewind.go)
		data = append(data, "rewind", from)
	}
	c.row(HistoryRunFailed, o.name, o.node, jsonObject(data...))
	c.emit(o.emitted, o.node)
}

func (o *runFailed) rebase(ctx context.Context, e *Engine, _, fresh *head) error {
	if !o.timedOut {
		return nil
	}
	return e.eventBeatsTimeout(ctx, fresh)
}

// failureText returns the message and step name of the run failure o commits ("" when o is
// no failure).
func failureText(o outcome) (msg, name string) {
	if f, ok := o.(*runFailed); ok {
		return f.msg, f.name
	}
	return "", ""
}
