package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// runStep runs and commits one step of h, whose graph version and policies sc holds. more
// reports whether the run can go on at once (another node to visit, or an inbox event to
// apply); a delayed continuation (retry back-off, wait timeout) is on the queue when it
// returns.
func (e *Engine) runStep(ctx context.Context, sc *stepCtx, h *head) (next *head, more bool, err error) {
	var o outcome
	ctx, endStep := e.observeStepStarted(ctx, h)
	var committed *head
	defer func() { endStep(committed, o) }()
	defer func() { sc.endLive(ctx, committed != nil) }() // the live writes' end (live.go)
	switch {
	case h.waiting != "": // an event's wait, or a child run's (child_wait.go)
		var wait bool
		if o, wait, err = e.waitStep(ctx, sc, h); err != nil || wait {
			return nil, false, err
		}
	case h.branchCount > 0: // a fan-out's branches: join them (branch.go)
		var ready bool
		if o, ready, err = e.joinStep(ctx, sc, h); err != nil || !ready {
			return nil, false, err
		}
	default:
		if o, err = e.visit(ctx, sc, h); err != nil {
			return nil, false, err
		}
	}
	n, err := e.commit(ctx, h, &o, sc.rows)
	var restep *restepError
	switch {
	case errors.As(err, &restep):
		return restep.fresh, true, nil
	case errors.Is(err, errDropped):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	e.logStep(n, o)
	committed = n
	if c, ok := o.(continuer); ok { // a fan-out's branches, a child's start
		return c.proceed(ctx, e, n)
	}
	return e.proceed(ctx, n)
}

// waitStep is the step of a run that waits: for its child run (child_wait.go), or for an
// event, which it applies when the inbox holds it, or whose wait times out at its deadline.
// wait reports that there is nothing to commit yet (a timer left on the queue, or nothing to
// do but wait).
func (e *Engine) waitStep(ctx context.Context, sc *stepCtx, h *head) (o outcome, wait bool, err error) {
	if h.childWait() {
		return e.childWait(ctx, sc, h)
	}
	ev, found, err := e.findEvent(ctx, h, h.waiting)
	if err != nil {
		return nil, false, err
	}
	now := e.clock().UnixNano()
	switch {
	case found:
		o, err = e.applyEvent(ctx, sc, h, ev)
		return o, false, err
	case h.waitDeadline != 0 && now >= h.waitDeadline:
		return e.timeout(sc, h), false, nil
	case h.waitDeadline != 0:
		// Runnable (or adopted) with no event yet: keep the timer on the queue.
		return nil, true, e.dispatch(context.WithoutCancel(ctx), h, time.Duration(h.waitDeadline-now))
	}
	return nil, true, nil // nothing to do: keep waiting
}

// proceed is what follows the commit of n: nothing for a finished run; the queue for a run
// that backs off or waits with a deadline; more (at once) for a runnable one.
func (e *Engine) proceed(ctx context.Context, n *head) (*head, bool, error) {
	switch {
	case !n.active():
		return n, false, nil
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
func (e *Engine) logStep(n *head, o outcome) {
	switch {
	case n.status == StatusCompleted:
		e.log.Info("run completed", "run_id", n.runID, "graph", n.graph, "step", n.step, "orchestrator", OrchestratorName)
	case n.status == StatusFailed:
		_, name := failureText(o)
		e.log.Info("run failed", "run_id", n.runID, "graph", n.graph, "step", n.step, "name", name)
	case n.waiting != "" && isVisit(o):
		e.log.Debug("run waiting for event", "run_id", n.runID, "graph", n.graph, "event", n.waiting)
	}
}

// visit runs one node visit: max-steps guard, execute node, resolve route. User code runs
// only inside ExecuteNode and ResolveRoute. The error result is for infrastructure failures
// (storage, shutdown), which leave the work item to be retried.
//
// MaxSteps bounds a run's node visits (head visits). A visit is one node visit that ends for
// good: a step's node that completed (whatever its route then decides), or that failed and
// takes its failure route, and each branch of a fan-out, completed or failed. Its retries are
// attempts of the one visit (MaxAttempts bounds them); an applied event, a wait that timed
// out, a join and a child's completion visit no node. The guard runs before a node's handler
// does, and a fan-out counts its branches before it commits (fanOut, branch.go), so a run
// never makes more than MaxSteps visits.
func (e *Engine) visit(ctx context.Context, sc *stepCtx, h *head) (outcome, error) {
	if h.visits+1 > sc.maxSteps {
		return e.maxStepsExceeded(sc, h), nil
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return nil, err
	}
	sctx, emitter := e.stepContext(ctx, sc, h)
	pol := sc.nodePolicy(h.node) // nodepolicy.go
	newState, err := state, error(nil)
	if !h.reroute { // a rewound route runs on the state its node committed (rewind.go)
		newState, err = executeNode(sctx, sc.g, h.node, pol.Timeout, state)
	}
	if err != nil {
		sc.handlersDone(ctx, true)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("execute node %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "attempt", h.attempt+1, "error", err.Error())
		return nodeFailed(sc, h, pol, err), nil
	}
	d, err := sc.g.ResolveRoute(sctx, h.node, newState)
	sc.handlersDone(ctx, err != nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("resolve route %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("resolve_route failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o := failure("resolve_route", ResolveRouteName, err.Error())
		o.node, o.state, o.emitted = h.node, newState, emitter.Events()
		return o, nil
	}
	v := visited{node: h.node, state: newState, decision: d, emitted: emitter.Events()}
	switch d.Action {
	case durable.ActionNext:
		return &routedNext{v}, nil
	case durable.ActionComplete:
		return &completed{visited: v}, nil
	case durable.ActionWaitForEvent:
		return e.waitStarted(ctx, sc, h, v)
	case durable.ActionSleep:
		return &slept{v}, nil // sleep.go
	case durable.ActionParallel:
		return e.fanOut(sc, h, v), nil // branch.go
	case durable.ActionChild:
		return e.childVisit(h, v), nil // child.go
	case durable.ActionContinueAsNew:
		return e.continueVisit(ctx, sc, h, v) // continue.go
	}
	return &v, nil
}

// maxStepsExceeded is the run's failure at its MaxSteps.
func (e *Engine) maxStepsExceeded(sc *stepCtx, h *head) *runFailed {
	cause := fmt.Sprintf("max steps exceeded: graph '%s' made %d node visits without completing", h.graph, sc.maxSteps)
	e.log.Warn("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
	return failure("orchestrator", OrchestratorName, cause)
}

// waitStarted is the outcome of visit v, whose route waits for an event: with the wait's
// timeout (the decision's own, else the policy's), and whether the event is in the inbox
// already.
func (e *Engine) waitStarted(ctx context.Context, sc *stepCtx, h *head, v visited) (outcome, error) {
	o := &waitStarted{visited: v, timeout: v.decision.Timeout}
	if o.timeout == 0 {
		o.timeout = sc.pol.WaitTimeout
	}
	if h.pending > 0 {
		_, found, err := e.findEvent(ctx, h, v.decision.EventName)
		if err != nil {
			return nil, err
		}
		o.match = found
	}
	return o, nil
}

// applyEvent runs the event handler on the oldest inbox row carrying the awaited name.
func (e *Engine) applyEvent(ctx context.Context, sc *stepCtx, h *head, ev Entity) (outcome, error) {
	state, err := e.loadState(ctx, h)
	if err != nil {
		return nil, err
	}
	p := ev.Properties
	payload, err := e.readSpilled(ctx, str(p, pPayload), str(p, pPayload+refSuffix))
	if err != nil {
		return nil, fmt.Errorf("read event payload of run %s: %w", h.runID, err)
	}
	name := str(p, pEvent)
	if err := checkGraphEvent(sc.g, h, name, json.RawMessage(payload)); err != nil {
		// Accepted where nothing could check it: refused now, and the run keeps waiting.
		e.log.Warn("event refused: it fails the check of its run's graph version", "run_id", h.runID, "graph", h.graph,
			"graph_hash", h.hash, "event", name, "error", err.Error())
		return &eventRefused{event: name, inboxRow: ev.RowKey, inboxSeq: parseSeq(ev.RowKey), refusal: err.Error()}, nil
	}
	sctx, emitter := e.stepContext(ctx, sc, h)
	newState, err := sc.g.ApplyEvent(sctx, name, state, json.RawMessage(payload))
	sc.handlersDone(ctx, err != nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("apply event %s of run %s: %w", name, h.runID, ctx.Err())
		}
		e.log.Warn("apply_event failed: graph="+h.graph+" hash="+h.hash+" event="+name,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o := failure("apply_event", ApplyEventName, err.Error())
		o.node = h.node
		return o, nil
	}
	return &eventApplied{state: newState, event: name, inboxRow: ev.RowKey, inboxSeq: parseSeq(ev.RowKey), emitted: emitter.Events()}, nil
}

// timeout handles a wait whose deadline passed with no matching event.
func (e *Engine) timeout(sc *stepCtx, h *head) outcome {
	p := sc.pol
	next := h.timeoutNode // the wait's own (RouteDecision.Within), else the policy's
	if next == "" {
		next = p.WaitTimeoutNode
	}
	if next != "" {
		return &waitTimedOut{node: h.node, event: h.waiting, next: next}
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
