package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Step kinds of a stepOutcome.
const (
	outVisit   = iota + 1 // a node ran and its route resolved
	outEvent              // an inbox event was applied
	outTimeout            // a wait timed out and continues at the policy's node
	outFail               // the run fails
	outRetry              // the node failed and will be retried after a back-off
	outBegin              // a step starts: a Pending run turns Running, a restart is counted
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
	// restart (begin): the step starts again after a start that ended in no commit.
	restart bool

	// event
	inboxRow string
	inboxSeq int64
	event    string

	// fail
	failKind   string // execute_node, resolve_route, apply_event, orchestrator
	failName   string // fixed internal name of the failing step kind
	failMsg    string // "<kind> failed: <cause>"
	keepCustom bool   // orchestrator failures keep the last custom status

	// retry
	retryDelay time.Duration
	retryCause string

	// timeout
	timeoutNode string
	// timedOut marks a timeout outcome (continuing at timeoutNode, or failing the run): an
	// event that reaches the inbox before it commits wins.
	timedOut bool
}

// failure returns the outcome of a step that fails the run with "<kind> failed: <cause>".
func failure(kind, name, cause string) stepOutcome {
	return stepOutcome{kind: outFail, failKind: kind, failName: name, failMsg: kind + " failed: " + cause,
		keepCustom: kind == "orchestrator"}
}

// errDropped reports a step whose commit lost to another writer that moved the run on (or
// finished, cancelled or purged it): the step's work is discarded, which is correct.
var errDropped = errors.New("engine: step dropped")

// maxRebase bounds how often a step re-applies its outcome to a head that changed only by
// raised events.
const maxRebase = 16

// buildCommit turns an outcome into the next head and the batch that writes it: a merge of
// the head conditioned on base's ETag plus the history rows it summarises (and, for an
// applied event, the deletion of the consumed inbox row), stamped with writeID. It is pure.
func (e *Engine) buildCommit(base *head, o *stepOutcome, now time.Time, writeID string) (*head, []Op) {
	n := base.clone()
	n.updated, n.writeID, n.awaitVersion = now, writeID, false
	n.restarts = 0 // a commit ends the step: its restarts no longer count
	var rowBuf [3]histRow
	rows := rowBuf[:0]
	setState := func() {
		n.stateVal = o.state
		n.stateJSON, n.stateRef = string(o.state), ""
	}
	switch o.kind {
	case outBegin:
		n.restarts = base.restarts
		if o.restart {
			n.restarts++
		}
		if base.status == StatusPending {
			// Durable Functions sets the custom status before the first activity: from here
			// on the run reads Running with the entrypoint as current_node.
			n.status = StatusRunning
			n.custom = customStatus(base, base.node)
		}
	case outVisit:
		n.step++
		n.visits++
		n.timedOut = ""
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
	case outTimeout:
		n.step++
		n.node = o.timeoutNode
		n.waiting, n.resume, n.waitDeadline = "", "", 0
		n.waitTimeout, n.timeoutNode, n.timedOut = 0, "", o.event
		n.custom = customStatus(base, o.timeoutNode)
		n.runnable = true
		rows = append(rows, histRow{typ: HistoryWaitTimedOut, name: OrchestratorName, node: o.node,
			data: jsonObject("event_name", jstr(o.event), "next_node", jstr(o.timeoutNode))})
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
		rows = append(rows, histRow{typ: HistoryRunFailed, name: o.failName, node: o.node, data: jsonObject("error", jstr(o.failMsg))})
	}
	ops := make([]Op, 0, len(rows)+2)
	ops = append(ops, Op{Kind: OpMerge, IfMatch: base.etag, Entity: Entity{PartitionKey: base.runID, RowKey: headRowKey, Properties: n.changedProps(base)}})
	ops = historyOps(ops, base.runID, base.gen, base.histSeq, n.step, now, writeID, rows)
	n.histSeq = base.histSeq + int64(len(rows))
	if n.histSeq != base.histSeq {
		ops[0].Entity.Properties[pHistSeq] = n.histSeq
	}
	if o.kind == outEvent {
		ops = append(ops, Op{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: base.runID, RowKey: o.inboxRow}})
	}
	return n, ops
}

// restepError reports a commit that must not be rebased but recomputed: the head changed in
// a way that changes what the step should do (an event arrived for a wait that was about to
// time out). fresh is the head to compute it on.
type restepError struct{ fresh *head }

func (e *restepError) Error() string { return "engine: step must be recomputed" }

// commit writes an outcome. A conflict means another writer changed the head: if it only
// appended events (same generation and step, still active, same wait), the outcome is
// rebuilt on the fresh head and written again, re-checking the inbox; otherwise the step is
// dropped (errDropped). A timeout whose wait got its event meanwhile is not rebased: the
// event wins (*restepError). A result the table cannot hold fails the run on this attempt.
//
// Every attempt carries the same write id: an error that is not a definite rejection (a
// conflict included: it may be the retry of an attempt that landed) is resolved by reading
// the commit's witness, and a commit that landed goes on as if Submit had answered.
func (e *Engine) commit(ctx context.Context, base *head, o *stepOutcome) (*head, error) {
	var sp spills
	stored := false
	id := newWriteID()
	for range maxRebase {
		n, ops := e.buildCommit(base, o, e.clock(), id)
		if err := e.spill(ctx, base.runID, base.nonce, ops, &sp); err != nil {
			if errors.Is(err, ErrTooLarge) && !stored {
				stored = true
				e.unstorable(base, o, err)
				continue
			}
			e.release(ctx, &sp, nil)
			return nil, err
		}
		if len(sp.byValue) > 0 { // else the properties hold n's own values
			n.absorb(ops[0].Entity.Properties)
		}
		etags, err := e.store.Submit(ctx, ops)
		if err == nil {
			return e.committed(ctx, base, n, ops, &sp, etags[0], nil)
		}
		if refused(err) {
			e.release(ctx, &sp, nil)
			if !stored {
				stored = true // convert once; a failure that cannot be stored is an infrastructure error
				e.unstorable(base, o, err)
				continue
			}
			return nil, fmt.Errorf("commit step run=%s step=%d: %w", base.runID, base.step+1, err)
		}
		first := int64(0)
		if n.histSeq > base.histSeq {
			first = base.histSeq + 1
		}
		fresh, landed, rerr := e.resolveWrite(ctx, base.runID, base.gen, base.nonce, first, id)
		switch {
		case rerr != nil:
			sp.keep() // the batch may have landed and refer to them
			return nil, fmt.Errorf("commit step run=%s step=%d: %w (outcome unknown: %v)", base.runID, base.step+1, err, rerr)
		case landed:
			e.log.Info("commit landed although its answer was an error", "run_id", base.runID, "step", n.step, "error", err.Error())
			return e.committed(ctx, base, n, ops, &sp, "", fresh)
		case fresh == nil || errors.Is(err, ErrNotFound): // the head is gone (purged), or the event was consumed
			e.release(ctx, &sp, nil)
			return nil, errDropped
		case !errors.Is(err, ErrConflict):
			// Not stored, as far as a read can tell; a redelivery of the work item retries.
			sp.keep()
			return nil, fmt.Errorf("commit step run=%s step=%d: %w", base.runID, base.step+1, err)
		}
		if fresh.gen != base.gen || fresh.nonce != base.nonce || fresh.step != base.step || !fresh.active() || fresh.waiting != base.waiting ||
			(o.kind == outRetry && fresh.attempt != base.attempt) {
			e.log.Debug("step dropped: run moved on", "run_id", base.runID, "step", base.step+1, "head_step", fresh.step, "status", string(fresh.status))
			e.release(ctx, &sp, nil)
			return nil, errDropped
		}
		fresh.stateVal = base.stateVal
		if o.timedOut && fresh.pending > 0 {
			// An event accepted before this commit beats the timeout.
			if _, found, err := e.findEvent(ctx, fresh, fresh.waiting); err != nil {
				e.release(ctx, &sp, nil)
				return nil, err
			} else if found {
				e.release(ctx, &sp, nil)
				return nil, &restepError{fresh: fresh}
			}
		}
		if o.kind == outVisit && o.decision.Action == durable.ActionWaitForEvent && fresh.pending > 0 && !o.waitMatch {
			_, found, err := e.findEvent(ctx, fresh, o.decision.EventName)
			if err != nil {
				e.release(ctx, &sp, nil)
				return nil, err
			}
			o.waitMatch = found
		}
		base = fresh
	}
	e.release(ctx, &sp, nil)
	return nil, fmt.Errorf("commit step run=%s step=%d: head keeps changing: %w", base.runID, base.step+1, ErrConflict)
}

// committed finishes a commit that is stored: it releases the payloads the batch does not
// refer to, records a finished run in the index and returns the new head. etag is the head's
// new ETag from Submit; when it is unknown, the head is read back (afterBlindCommit), or
// fresh, the head a resolving read returned, is used.
func (e *Engine) committed(ctx context.Context, base, n *head, ops []Op, sp *spills, etag string, fresh *head) (*head, error) {
	e.release(ctx, sp, ops)
	if base.stateRef != "" && n.stateRef != base.stateRef {
		// The head no longer refers to the state it replaced; nothing else does.
		e.release(ctx, &spills{byValue: map[string]string{"": base.stateRef}}, nil)
	}
	if base.active() && !n.active() {
		e.indexSetStatus(ctx, n)
	}
	e.changes.notify()
	if n.etag = etag; n.etag != "" || !n.active() {
		return n, nil
	}
	if fresh != nil {
		return e.continueFrom(n, fresh)
	}
	return e.afterBlindCommit(ctx, n)
}

// afterBlindCommit learns the ETag of a commit whose store returned none, by reading the
// head back. The commit happened (Submit succeeded): if the head still holds this step,
// anything else on it (raised events) came after, and the run goes on from the head as
// read; if another writer moved the run on (a cancel, a duplicate worker), that writer
// drives it and this worker stops (errDropped), never mistaking its own commit for a lost
// one.
func (e *Engine) afterBlindCommit(ctx context.Context, n *head) (*head, error) {
	fresh, err := e.getHead(ctx, n.runID)
	if err != nil {
		return nil, fmt.Errorf("reread head after commit run=%s step=%d: %w", n.runID, n.step, err)
	}
	return e.continueFrom(n, fresh)
}

// continueFrom returns fresh, the head read after commit n was stored, to go on from, or
// errDropped when another writer has moved the run on since.
func (e *Engine) continueFrom(n, fresh *head) (*head, error) {
	if fresh.gen != n.gen || fresh.nonce != n.nonce || fresh.step != n.step || fresh.status != n.status || fresh.attempt != n.attempt {
		e.log.Debug("run moved on after commit", "run_id", n.runID, "step", n.step, "head_step", fresh.step)
		return nil, errDropped
	}
	fresh.stateVal = n.stateVal
	return fresh, nil
}

// unstorable turns an outcome whose commit the table refuses (a property, entity or batch
// above Azure's limits, e.g. a route's event name of 100 KiB) into a run failure that names
// the limit, so the run fails on this attempt instead of retrying as an infrastructure
// error.
func (e *Engine) unstorable(base *head, o *stepOutcome, err error) {
	cause := "step result cannot be stored: invalid table entity"
	var le *LimitError
	if errors.As(err, &le) {
		cause = fmt.Sprintf("step result too large to store: %s of %d above the limit of %d", le.Limit, le.Size, le.Max)
		if le.Property != "" {
			cause += " (property " + le.Property + ")"
		}
	} else if errors.Is(err, ErrTooLarge) {
		cause = "step result too large to store"
	}
	e.log.Warn("orchestrator failed: graph="+base.graph+" hash="+base.hash, "run_id", base.runID, "error", cause)
	*o = failure("orchestrator", OrchestratorName, cause)
	o.node = base.node
}
