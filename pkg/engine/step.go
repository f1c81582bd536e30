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

// runStep runs and commits one step of h. more reports whether the run can go on at once
// (another node to visit, or an inbox event to apply); a delayed continuation (retry
// back-off, wait timeout) is on the queue when it returns.
func (e *Engine) runStep(ctx context.Context, h *head) (next *head, more bool, err error) {
	var o stepOutcome
	ctx, endStep := e.observeStepStarted(ctx, h)
	var committed *head
	defer func() { endStep(committed, &o) }()
	switch {
	case h.childWait():
		var wait bool
		if o, wait, err = e.childWait(ctx, h); err != nil || wait {
			return nil, false, err
		}
	case h.waiting != "":
		ev, found, err := e.findEvent(ctx, h, h.waiting)
		if err != nil {
			return nil, false, err
		}
		now := e.clock().UnixNano()
		switch {
		case found:
			if o, err = e.applyEvent(ctx, h, ev); err != nil {
				return nil, false, err
			}
		case h.waitDeadline != 0 && now >= h.waitDeadline:
			o = e.timeout(h)
		case h.waitDeadline != 0:
			// Runnable (or adopted) with no event yet: keep the timer on the queue.
			return nil, false, e.dispatch(context.WithoutCancel(ctx), h, time.Duration(h.waitDeadline-now))
		default:
			return nil, false, nil // nothing to do: keep waiting
		}
	case h.branchCount > 0: // a fan-out's branches: join them (branch.go)
		var ready bool
		if o, ready, err = e.joinStep(ctx, h); err != nil || !ready {
			return nil, false, err
		}
	default:
		if o, err = e.visit(ctx, h); err != nil {
			return nil, false, err
		}
	}
	n, err := e.commit(ctx, h, &o)
	var restep *restepError
	switch {
	case errors.As(err, &restep):
		return restep.fresh, true, nil
	case errors.Is(err, errDropped):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	e.logStep(n, &o)
	committed = n
	if o.kind == outVisit && o.decision.Action == durable.ActionChild && n.childWait() {
		return e.childStarting(ctx, n, o.decision.Child)
	}
	switch {
	case !n.active():
		return n, false, nil
	case n.branchCount > 0 && h.branchCount == 0: // a fan-out: its branches go to the queue
		return n, false, e.dispatchBranches(context.WithoutCancel(ctx), n, o.decision.Branches)
	case n.notBefore != 0:
		return n, false, e.dispatch(context.WithoutCancel(ctx), n, time.Duration(n.notBefore-e.clock().UnixNano()))
	case n.waiting != "" && !n.runnable:
		if n.waitDeadline != 0 {
			return n, false, e.dispatch(context.WithoutCancel(ctx), n, time.Duration(n.waitDeadline-e.clock().UnixNano()))
		}
		return n, false, nil
	}
	return n, true, nil
}

// logStep logs a step that completed or failed the run, or made it wait.
func (e *Engine) logStep(n *head, o *stepOutcome) {
	switch {
	case n.status == StatusCompleted:
		e.log.Info("run completed", "run_id", n.runID, "graph", n.graph, "step", n.step, "orchestrator", OrchestratorName)
	case n.status == StatusFailed:
		e.log.Info("run failed", "run_id", n.runID, "graph", n.graph, "step", n.step, "name", o.failName)
	case n.waiting != "" && o.kind == outVisit:
		e.log.Debug("run waiting for event", "run_id", n.runID, "graph", n.graph, "event", n.waiting)
	}
}

// visit runs one node visit: pin lookup, max-steps guard, execute node,
// resolve route. User code runs only inside ExecuteNode and ResolveRoute. The error result
// is for infrastructure failures (storage, shutdown), which leave the work item to be retried,
// and errVersionUnavailable for a run whose graph version is not registered (version.go).
func (e *Engine) visit(ctx context.Context, h *head) (stepOutcome, error) {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		return stepOutcome{}, fmt.Errorf("%w: %v", errVersionUnavailable, err)
	}
	if maxSteps := e.maxSteps(h.graph); h.visits+1 > maxSteps {
		cause := fmt.Sprintf("max steps exceeded: graph '%s' made %d node visits without completing", h.graph, maxSteps)
		e.log.Warn("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
		return failure("orchestrator", OrchestratorName, cause), nil
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return stepOutcome{}, err
	}
	sctx, emitter := stepContext(ctx, h)
	pol := nodePolicy(g, h.node) // nodepolicy.go
	newState, err := executeNode(sctx, g, h.node, pol.Timeout, state)
	if err != nil {
		if ctx.Err() != nil {
			return stepOutcome{}, fmt.Errorf("execute node %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "attempt", h.attempt+1, "error", err.Error())
		return e.nodeFailed(g, h, pol, err), nil
	}
	d, err := g.ResolveRoute(sctx, h.node, newState)
	if err != nil {
		if ctx.Err() != nil {
			return stepOutcome{}, fmt.Errorf("resolve route %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("resolve_route failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o := failure("resolve_route", ResolveRouteName, err.Error())
		o.node, o.state, o.emitted = h.node, newState, emitter.Events()
		return o, nil
	}
	o := stepOutcome{kind: outVisit, node: h.node, state: newState, decision: d, emitted: emitter.Events()}
	if d.Action == durable.ActionChild {
		if f, bad := e.checkChild(h, d.Child, newState); bad {
			return f, nil
		}
	}
	if d.Action == durable.ActionWaitForEvent && h.pending > 0 {
		if _, found, err := e.findEvent(ctx, h, d.EventName); err != nil {
			return stepOutcome{}, err
		} else if found {
			o.waitMatch = true
		}
	}
	return o, nil
}

// applyEvent runs the event handler on the oldest inbox row carrying the awaited name.
func (e *Engine) applyEvent(ctx context.Context, h *head, ev Entity) (stepOutcome, error) {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		return stepOutcome{}, fmt.Errorf("%w: %v", errVersionUnavailable, err)
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return stepOutcome{}, err
	}
	p := ev.Properties
	payload, err := e.readSpilled(ctx, str(p, pPayload), str(p, pPayload+refSuffix))
	if err != nil {
		return stepOutcome{}, fmt.Errorf("read event payload of run %s: %w", h.runID, err)
	}
	name := str(p, pEvent)
	if err := e.checkEvent(h, name, json.RawMessage(payload)); err != nil {
		// Accepted where nothing could check it: refused now, and the run keeps waiting.
		e.log.Warn("event refused: it fails the check of its run's graph version", "run_id", h.runID, "graph", h.graph,
			"graph_hash", h.hash, "event", name, "error", err.Error())
		return stepOutcome{kind: outRefuse, event: name, inboxRow: ev.RowKey, inboxSeq: parseSeq(ev.RowKey), refusal: err.Error()}, nil
	}
	sctx, emitter := stepContext(ctx, h)
	newState, err := g.ApplyEvent(sctx, name, state, json.RawMessage(payload))
	if err != nil {
		if ctx.Err() != nil {
			return stepOutcome{}, fmt.Errorf("apply event %s of run %s: %w", name, h.runID, ctx.Err())
		}
		e.log.Warn("apply_event failed: graph="+h.graph+" hash="+h.hash+" event="+name,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o := failure("apply_event", ApplyEventName, err.Error())
		o.node = h.node
		return o, nil
	}
	return stepOutcome{kind: outEvent, state: newState, event: name, inboxRow: ev.RowKey, inboxSeq: parseSeq(ev.RowKey), emitted: emitter.Events()}, nil
}

// timeout handles a wait whose deadline passed with no matching event.
func (e *Engine) timeout(h *head) stepOutcome {
	p := e.policy(h.graph)
	next := h.timeoutNode // the wait's own (RouteDecision.Within), else the policy's
	if next == "" {
		next = p.WaitTimeoutNode
	}
	if next != "" {
		return stepOutcome{kind: outTimeout, node: h.node, event: h.waiting, timeoutNode: next, timedOut: true}
	}
	d := time.Duration(h.waitTimeout)
	if d == 0 && p.WaitTimeout > 0 {
		d = p.WaitTimeout
	} else if d == 0 {
		d = time.Duration(h.waitDeadline - h.updated.UnixNano())
	}
	e.log.Warn("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", "wait timed out")
	o := failure("orchestrator", OrchestratorName, fmt.Sprintf("wait for event '%s' timed out after %s", h.waiting, d))
	o.node, o.timedOut = h.node, true
	return o
}

// stepInfo is the StepInfo handlers of the next step of h see.
func stepInfo(h *head) durable.StepInfo {
	return durable.StepInfo{RunID: h.runID, Generation: h.gen, Nonce: h.nonce, Step: h.step + 1, Attempt: int(h.attempt) + 1,
		TimedOutWaitingFor: h.timedOut, Failure: nodeFailureOf(h), ChildRunID: h.childDone}
}

// policy returns the guards of a graph.
func (e *Engine) policy(graph string) GraphPolicy { return e.opts.Policies[graph] }

// maxSteps returns the node visits a run of graph may make.
func (e *Engine) maxSteps(graph string) int64 {
	if p := e.policy(graph); p.MaxSteps > 0 {
		return int64(p.MaxSteps)
	}
	return int64(e.opts.MaxSteps)
}

// loadState returns the head's state, reading the payload store when it was spilled.
func (e *Engine) loadState(ctx context.Context, h *head) (json.RawMessage, error) {
	if h.stateVal != nil {
		return h.stateVal, nil
	}
	v, err := e.readSpilled(ctx, h.stateJSON, h.stateRef)
	if err != nil {
		return nil, fmt.Errorf("load state run=%s: %w", h.runID, err)
	}
	h.stateVal = json.RawMessage(v)
	return h.stateVal, nil
}

// findEvent returns the oldest inbox row of h's generation carrying name.
func (e *Engine) findEvent(ctx context.Context, h *head, name string) (Entity, bool, error) {
	if h.pending <= 0 {
		return Entity{}, false, nil
	}
	from, to := genRange('i', h.gen)
	q := Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to, Where: []Cond{{Property: pEvent, Op: CondEq, Value: name}}, Limit: 1}
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return Entity{}, false, fmt.Errorf("read inbox run=%s: %w", h.runID, err)
		}
		if len(page.Entities) > 0 {
			return page.Entities[0], true, nil
		}
		if page.Continuation == "" {
			return Entity{}, false, nil
		}
		q.Continuation = page.Continuation
	}
}

// Step kinds of a stepOutcome.
const (
	outVisit        = iota + 1 // a node ran and its route resolved
	outEvent                   // an inbox event was applied
	outTimeout                 // a wait timed out and continues at the policy's node
	outFail                    // the run fails
	outRetry                   // the node failed and will be retried after a back-off
	outBegin                   // a step starts: a Pending run turns Running, and/or a start takes its hold
	outRefuse                  // an inbox event failed its check: consumed, not applied; the wait goes on
	outFailureRoute            // the node failed for good and the run takes its failure route (nodepolicy.go)
)

// stepOutcome is what a step's activities produced, before it is committed. Building the
// commit from it is pure, so a commit that lost a race against an event can be rebuilt on
// the fresh head without running user code again.
type stepOutcome struct {
	kind     int
	node     string                // node visited (visit, fail, retry)
	state    json.RawMessage       // new state (visit, event; fail after a completed node)
	decision durable.RouteDecision // visit
	// waitMatch: a wait decision whose event is already in the inbox.
	waitMatch bool
	// emitted: what the step's handlers emitted (visit, event; fail after a completed node),
	// written before the step's rows (emitted.go).
	emitted []graphrun.EmittedEvent
	// begin: the hold this start takes ("" for none), the end of its lease in unix nanos,
	// and the deaths its judgement of the head's hold added (the kill limit, workitem.go).
	hold      string
	holdUntil int64
	deaths    int64

	// event (refuse: the refused event, and why)
	inboxRow string
	inboxSeq int64
	event    string
	refusal  string

	// fail
	failKind   string // execute_node, resolve_route, apply_event, orchestrator
	failName   string // fixed internal name of the failing step kind
	failMsg    string // "<kind> failed: <cause>"
	keepCustom bool   // orchestrator failures keep the last custom status

	// retry
	retryDelay time.Duration
	retryCause string

	// failure route (nodepolicy.go)
	failureNode, failureErr string

	// timeout
	timeoutNode string
	// timedOut marks a timeout outcome (continuing at timeoutNode, or failing the run): an
	// event that reaches the inbox before it commits wins.
	timedOut bool

	// finishing (complete, fail): the inbox events left, never applied (unapplied.go), how
	// many more it holds, and the InboxSeq of the head they were read for.
	unapplied     []unappliedEvent
	unappliedMore int64
	unappliedOf   int64
	// child (outChild): the child run that completed (child.go)
	child *childEnd
}

// failure returns the outcome of a step that fails the run with "<kind> failed: <cause>".
func failure(kind, name, cause string) stepOutcome {
	return stepOutcome{kind: outFail, failKind: kind, failName: name, failMsg: kind + " failed: " + cause,
		keepCustom: kind == "orchestrator"}
}

// buildCommit turns an outcome into the next head and the batch that writes it: a merge of
// the head conditioned on base's ETag plus the history rows it summarises (and, for an
// applied event, the deletion of the consumed inbox row), stamped with writeID. It is pure.
func (e *Engine) buildCommit(base *head, o *stepOutcome, now time.Time, writeID string) (*head, []Op) {
	n := base.clone()
	n.updated, n.writeID, n.awaitVersion = now, writeID, false
	n.restarts = 0 // a commit ends the step: its deaths no longer count, nobody holds it
	n.holder, n.holdUntil = "", 0
	var rowBuf [3]histRow
	rows := rowBuf[:0]
	setState := func() {
		n.stateVal = o.state
		n.stateJSON, n.stateRef = string(o.state), ""
	}
	switch o.kind {
	case outBegin:
		n.restarts = base.restarts + o.deaths
		n.holder, n.holdUntil = o.hold, o.holdUntil
		if base.status == StatusPending {
			// Durable Functions sets the custom status before the first activity: from here
			// on the run reads Running with the entrypoint as current_node.
			n.status = StatusRunning
			n.custom = customStatus(base, base.node)
		}
	case outVisit:
		n.step++
		n.visits++
		n.timedOut, n.failure = "", ""
		n.attempt, n.notBefore = 0, 0
		n.status = StatusRunning
		setState()
		rows = append(rows,
			histRow{typ: HistoryNodeCompleted, name: ExecuteNodeName, node: o.node, data: jsonObject("state", n.stateJSON)},
			histRow{typ: HistoryRouteResolved, name: ResolveRouteName, node: o.node, data: decisionJSON(o.decision)})
		switch d := o.decision; d.Action {
		case durable.ActionComplete:
			n.status = StatusCompleted
			n.outputJSON, n.outputRef = completedOutput(base, o.node, n.stateJSON), ""
			n.custom = customStatus(base, o.node)
			n.runnable = false
			rows = notAppliedRows(rows, o.unapplied, o.unappliedMore, o.node)
			rows = append(rows, histRow{typ: HistoryRunCompleted, name: OrchestratorName, node: o.node, data: n.outputJSON})
		case durable.ActionNext:
			n.node = d.NextNode
			n.custom = customStatus(base, d.NextNode)
			n.runnable = true
		case durable.ActionWaitForEvent:
			n.waiting, n.resume = d.EventName, d.ResumeNode
			n.custom = waitingStatus(base, o.node, d.EventName, d.ResumeNode)
			n.runnable = o.waitMatch
			data := []string{"event_name", jstr(d.EventName), "resume_node", jstr(d.ResumeNode)}
			t := d.Timeout // the decision's own (RouteDecision.Within), else the policy's
			if t == 0 {
				t = e.policy(base.graph).WaitTimeout
			}
			if t > 0 {
				n.waitDeadline, n.waitTimeout, n.timeoutNode = now.Add(t).UnixNano(), int64(t), d.TimeoutNode
				data = append(data, "deadline", jstr(now.Add(t).UTC().Format(time.RFC3339Nano)))
				if d.TimeoutNode != "" {
					data = append(data, "timeout_node", jstr(d.TimeoutNode))
				}
			}
			rows = append(rows, histRow{typ: HistoryWaitStarted, name: OrchestratorName, node: o.node, data: jsonObject(data...)})
		case durable.ActionSleep:
			rows = append(rows, sleepStarted(n, base, o.node, d, now)) // sleep.go
		case durable.ActionParallel:
			rows = e.fanOutRows(base, n, o, rows)
		}
	case outEvent:
		n.step++
		setState()
		n.node = base.resume
		n.waiting, n.resume, n.waitDeadline = "", "", 0
		n.waitTimeout, n.timeoutNode = 0, ""
		n.pending--
		n.custom = customStatus(base, base.resume)
		n.runnable = true
		rows = append(rows, histRow{typ: HistoryEventApplied, name: ApplyEventName, node: base.resume,
			data: jsonObject("event_name", jstr(o.event), "inbox_seq", itoa(o.inboxSeq), "state", n.stateJSON)})
	case outRefuse:
		n.step++
		n.pending--
		n.runnable = n.pending > 0 // another event may carry the awaited name
		rows = append(rows, histRow{typ: HistoryEventRefused, name: ApplyEventName, node: base.node,
			data: jsonObject("event_name", jstr(o.event), "inbox_seq", itoa(o.inboxSeq), "error", jstr(o.refusal))})
	case outTimeout:
		n.step++
		n.node = o.timeoutNode
		n.waiting, n.resume, n.waitDeadline = "", "", 0
		n.waitTimeout, n.timeoutNode, n.timedOut = 0, "", o.event
		n.custom = customStatus(base, o.timeoutNode)
		n.runnable = true
		rows = append(rows, histRow{typ: HistoryWaitTimedOut, name: OrchestratorName, node: o.node,
			data: jsonObject("event_name", jstr(o.event), "next_node", jstr(o.timeoutNode))})
	case outFailureRoute:
		rows = append(rows, failureRouted(n, base, o)) // nodepolicy.go
	case outJoin:
		rows = e.joinRows(base, n, o, rows)
	case outRetry:
		n.attempt++
		n.notBefore = now.Add(o.retryDelay).UnixNano()
		n.runnable = true
		rows = append(rows, histRow{typ: HistoryNodeRetryScheduled, name: ExecuteNodeName, node: o.node,
			data: jsonObject("attempt", itoa(n.attempt+1), "delay_ms", itoa(o.retryDelay.Milliseconds()), "error", jstr(o.retryCause))})
	case outFail:
		n.step++
		if o.state != nil { // the node completed, then its route failed
			setState()
			rows = append(rows, histRow{typ: HistoryNodeCompleted, name: ExecuteNodeName, node: o.node, data: jsonObject("state", n.stateJSON)})
		}
		n.status = StatusFailed
		n.outputJSON, n.outputRef = jstr(o.failMsg), ""
		if !o.keepCustom && base.waiting == "" {
			n.custom = customStatus(base, base.node)
		}
		n.waitDeadline, n.notBefore = 0, 0
		n.runnable = false
		rows = notAppliedRows(rows, o.unapplied, o.unappliedMore, o.node)
		rows = append(rows, histRow{typ: HistoryRunFailed, name: o.failName, node: o.node, data: jsonObject("error", jstr(o.failMsg))})
	}
	rows = emittedRows(rows, o)
	rows = e.childCommit(base, n, o, now, rows)
	ops := make([]Op, 0, len(rows)+2)
	ops = append(ops, Op{Kind: OpMerge, IfMatch: base.etag, Entity: Entity{PartitionKey: base.runID, RowKey: headRowKey, Properties: n.changedProps(base)}})
	ops = historyOps(ops, base.runID, base.gen, base.histSeq, n.step, now, writeID, rows)
	n.histSeq = base.histSeq + int64(len(rows))
	if n.histSeq != base.histSeq {
		ops[0].Entity.Properties[pHistSeq] = n.histSeq
	}
	if o.kind == outEvent || o.kind == outRefuse {
		ops = append(ops, Op{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: base.runID, RowKey: o.inboxRow}})
	}
	ops = e.branchOps(base, n, o, ops, now)
	return n, childOps(ops, base, n, o, now, writeID)
}
