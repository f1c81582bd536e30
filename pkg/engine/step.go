package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

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
	sctx := durable.WithStepInfo(ctx, stepInfo(h))
	newState, err := g.ExecuteNode(sctx, h.node, state)
	if err != nil {
		if ctx.Err() != nil {
			return stepOutcome{}, fmt.Errorf("execute node %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("execute_node failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "attempt", h.attempt+1, "error", err.Error())
		var herr *durable.HandlerError
		if retry := e.policy(h.graph).Retry; errors.As(err, &herr) && h.attempt+1 < int64(retry.MaxAttempts) {
			return stepOutcome{kind: outRetry, node: h.node, retryDelay: retry.backoff(h.attempt + 2), retryCause: err.Error()}, nil
		}
		o := failure("execute_node", ExecuteNodeName, err.Error())
		o.node = h.node
		return o, nil
	}
	d, err := g.ResolveRoute(sctx, h.node, newState)
	if err != nil {
		if ctx.Err() != nil {
			return stepOutcome{}, fmt.Errorf("resolve route %s of run %s: %w", h.node, h.runID, ctx.Err())
		}
		e.log.Warn("resolve_route failed: graph="+h.graph+" hash="+h.hash+" node="+h.node,
			"run_id", h.runID, "step", h.step+1, "error", err.Error())
		o := failure("resolve_route", ResolveRouteName, err.Error())
		o.node, o.state = h.node, newState
		return o, nil
	}
	o := stepOutcome{kind: outVisit, node: h.node, state: newState, decision: d}
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
	newState, err := g.ApplyEvent(durable.WithStepInfo(ctx, stepInfo(h)), name, state, json.RawMessage(payload))
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
	return stepOutcome{kind: outEvent, state: newState, event: name, inboxRow: ev.RowKey, inboxSeq: parseSeq(ev.RowKey)}, nil
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
		TimedOutWaitingFor: h.timedOut}
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
