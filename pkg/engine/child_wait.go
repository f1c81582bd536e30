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

// The step of a run that waits for its child run (child.go): whatever woke it, it reads the
// child's head and believes only that.

// childWait is the step of a run waiting for its child, whatever woke it (the child's notice
// or the recheck timer): it reads the child's head and believes only that. A child that never
// started is started; a running one gets the next recheck (wait: nothing to commit); a
// finished one resumes or fails the run.
func (e *Engine) childWait(ctx context.Context, sc *stepCtx, h *head) (o outcome, wait bool, err error) {
	id := h.waiting
	ch, err := e.getHead(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return e.childMissing(ctx, h)
	case err != nil:
		return nil, false, fmt.Errorf("read child run %s of run %s: %w", id, h.runID, err)
	case ch.parent != h.runID || ch.parentNonce != h.nonce:
		return e.failChild(h, h.node, nil, startCause(ch.graph, &childTakenError{id: id})), false, nil
	case ch.active():
		return nil, true, e.recheck(ctx, h, ch.created)
	}
	return e.childFinished(ctx, sc, h, ch)
}

// childMissing starts the child h waits for, which has no head: the worker that stored the
// wait died before starting it (a child is never purged while its parent waits for it). A
// process that does not register the child's graph (a rolling deploy: the one that stored the
// wait did) parks the parent as a run whose own version is missing is parked (version.go):
// its work item goes back on the queue with the version back-off, reckoned from the time the
// wait was stored; nothing is written, nothing fails and no death is counted.
func (e *Engine) childMissing(ctx context.Context, h *head) (outcome, bool, error) {
	l, err := e.readLink(ctx, h)
	if errors.Is(err, ErrNotFound) {
		return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' has no link row in its parent run", h.waiting)), false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if _, err := e.reg.Latest(l.graph); errors.Is(err, durable.ErrUnknownGraph) {
		d := parkedBackoff(e.clock().Sub(l.time))
		e.log.Warn("child run's graph is not registered on this process: its parent waits for a process that has it", "run_id", h.runID,
			"child_id", h.waiting, "graph", l.graph, "retry_in", d.String())
		return nil, true, e.dispatch(context.WithoutCancel(ctx), h, d)
	}
	if err := e.startChild(ctx, h, l.graph, l.input); err != nil {
		if childRefused(err) {
			return e.failChild(h, h.node, nil, startCause(l.graph, err)), false, nil
		}
		return nil, false, fmt.Errorf("start child run %s of run %s: %w", h.waiting, h.runID, err)
	}
	e.log.Info("started a child run its parent's worker had left unstarted", "run_id", h.runID, "child_id", h.waiting)
	return nil, true, e.recheck(ctx, h, e.clock())
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
// into the Into field and the run continues at the resume node; a failed or terminated child
// sends the run along its node's failure route, or fails it (childLost).
func (e *Engine) childFinished(ctx context.Context, sc *stepCtx, h *head, ch *head) (outcome, bool, error) {
	id := h.waiting
	out, err := e.readSpilled(ctx, ch.outputJSON, ch.outputRef)
	if err != nil {
		return nil, false, fmt.Errorf("read output of child run %s: %w", id, err)
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
		o, err := e.childLost(ctx, sc, h, ch, fmt.Sprintf("child run '%s' of graph '%s' %s: %s", id, ch.graph, verb, msg))
		return o, false, err
	}
	l, err := e.readLink(ctx, h)
	if errors.Is(err, ErrNotFound) {
		return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' has no link row in its parent run", id)), false, nil
	}
	if err != nil {
		return nil, false, err
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return nil, false, err
	}
	if l.into != "" {
		var res struct {
			State json.RawMessage `json:"state"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.State) == 0 {
			return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' completed without a final state", id)), false, nil
		}
		if state, err = setField(ctx, sc.g, state, l.into, res.State); err != nil {
			if ctx.Err() != nil {
				return nil, false, err
			}
			return e.failChild(h, h.node, nil, fmt.Sprintf("child run '%s' completed, but its final state does not fit state field '%s': %v", id, l.into, err)), false, nil
		}
	}
	return &childResumed{node: h.node, child: id, into: l.into, state: state, family: ch.familyRuns()}, false, nil
}

// childLost is the outcome of h's wait whose child run ch failed or was terminated (cause):
// the failure route of the node that started the child, counting what the child's chain
// started (chainFamily), else the run's failure.
func (e *Engine) childLost(ctx context.Context, sc *stepCtx, h, ch *head, cause string) (outcome, error) {
	to := sc.nodePolicy(h.node).FailureNode
	if to == "" {
		return e.failChild(h, h.node, nil, cause), nil
	}
	family, err := e.chainFamily(ctx, ch)
	if err != nil {
		return nil, err
	}
	e.log.Warn("child run did not complete: taking the failure route", "run_id", h.runID, "child_id", h.waiting, "node", h.node, "failure_node", to)
	return &childFailed{node: h.node, to: to, cause: cause, family: family}, nil
}

// chainFamily returns how many runs of its family ch, a child run that failed or was
// terminated, and the chain of children below it had started: a run that fails or is
// cancelled while it waits for a child keeps the wait (awaited), and the runs started below
// it are counted on that child's head, and so on down the chain, the deepest knowing most.
// It reads at most MaxChildDepth heads; a run of the chain that is gone ends it.
func (e *Engine) chainFamily(ctx context.Context, ch *head) (int64, error) {
	n := ch.familyRuns()
	for range e.opts.MaxChildDepth {
		id := ch.awaited()
		if id == "" {
			break
		}
		next, err := e.getHead(ctx, id)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read the family of child run %s: %w", ch.runID, err)
		}
		if next.parent != ch.runID || next.parentNonce != ch.nonce {
			break
		}
		n, ch = max(n, next.familyRuns()), next
	}
	return n, nil
}

// setField sets field of state to value through g, the run's graph
// (graphrun.ChildOutputSetter), or as a member of the state object for a graph without it.
func setField(ctx context.Context, g durable.Graph, state json.RawMessage, field string, value json.RawMessage) (json.RawMessage, error) {
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

// link is a child's link row: what its parent started it with, and when its parent stored
// the wait (by the clock of the process that did).
type link struct {
	graph, into string
	input       json.RawMessage
	time        time.Time
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
	at, _ := p[pTime].(time.Time)
	return link{graph: str(p, pGraph), into: str(p, pInto), input: json.RawMessage(in), time: at}, nil
}
