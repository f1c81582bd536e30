package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// workItem is the queue message of the engine, JSON-encoded:
//
//	{"v":1,"run_id":"<instance id>","gen":<generation>,"step":<step>}
//
// It asks: "if run_id is still at generation gen and step step, run it". Messages are
// enqueued as raw JSON; a queue backend whose consumer is the Functions queue trigger
// base64-encodes them (HandleWorkItem accepts both forms).
type workItem struct {
	V     int    `json:"v"`
	RunID string `json:"run_id"`
	Gen   int64  `json:"gen"`
	Step  int64  `json:"step"`
	// Trace is the run's trace context (optional; items without it decode as before).
	Trace string `json:"tp,omitempty"`
}

// ErrInvalidWorkItem reports a queue message that is not a work item.
var ErrInvalidWorkItem = errors.New("durable: invalid work item")

func encodeWorkItem(runID string, gen, step int64, trace string) []byte {
	b := make([]byte, 0, 64+len(runID))
	b = append(b, `{"v":1,"run_id":`...)
	b = appendJSONString(b, runID)
	b = append(b, `,"gen":`...)
	b = append(b, itoa(gen)...)
	b = append(b, `,"step":`...)
	b = append(b, itoa(step)...)
	if trace != "" {
		b = append(b, `,"tp":`...)
		b = appendJSONString(b, trace)
	}
	return append(b, '}')
}

func decodeWorkItem(body []byte) (workItem, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] != '{' {
		dec, err := base64.StdEncoding.DecodeString(string(body))
		if err != nil {
			return workItem{}, fmt.Errorf("%w: neither JSON nor base64", ErrInvalidWorkItem)
		}
		body = bytes.TrimSpace(dec)
	}
	var it workItem
	if err := json.Unmarshal(body, &it); err != nil {
		return workItem{}, fmt.Errorf("%w: %v", ErrInvalidWorkItem, err)
	}
	if it.V != 1 || !ValidInstanceID(it.RunID) || it.Gen < 1 || it.Step < 0 {
		return workItem{}, fmt.Errorf("%w: version %d, run %q, gen %d, step %d", ErrInvalidWorkItem, it.V, it.RunID, it.Gen, it.Step)
	}
	return it, nil
}

// dispatch enqueues a work item for h's next step. A delayed item also schedules a local
// wake-up so the embedded dispatcher sees it when it becomes visible.
func (e *Engine) dispatch(ctx context.Context, h *head, delay time.Duration) error {
	if err := e.queue.Enqueue(ctx, encodeWorkItem(h.runID, h.gen, h.step, h.trace), delay); err != nil {
		return fmt.Errorf("dispatch run=%s step=%d: %w", h.runID, h.step, err)
	}
	if delay <= 0 {
		e.wake()
	} else if e.started.Load() {
		time.AfterFunc(delay, e.wake)
	}
	return nil
}

// HandleWorkItem processes one work item: the entry point of a queue trigger (the
// fg_orchestrator function) and of the embedded dispatcher. body is the message text (the
// JSON work item, or its base64 form); dequeueCount is the queue's delivery count.
//
// It returns nil when the message is done and should be deleted: the step ran and was
// committed, or the item was stale or a duplicate (its run moved on), or malformed (logged
// and dropped). A non-nil error means "retry later" (storage unavailable, shutdown); the
// message then stays in the queue and comes back after its visibility timeout. An item
// delivered MaxDequeueCount times fails its run instead of looping forever.
func (e *Engine) HandleWorkItem(ctx context.Context, body []byte, dequeueCount int64) error {
	it, err := decodeWorkItem(body)
	if err != nil {
		e.log.Error("dropping malformed work item", "error", err.Error(), "orchestrator", OrchestratorName)
		return nil
	}
	return e.process(e.obs.extract(ctx, it.Trace), it, dequeueCount)
}

// process runs a work item: read the head, check the item is current, then run steps
// in-process — one commit per step — until the run finishes, waits, backs off, or the step
// budget is spent (then the run goes back to the queue).
func (e *Engine) process(ctx context.Context, it workItem, dequeueCount int64) error {
	h, err := e.getHead(ctx, it.RunID)
	if errors.Is(err, ErrNotFound) {
		e.log.Debug("dropping work item of a purged run", "run_id", it.RunID)
		return nil
	}
	if err != nil {
		return err
	}
	if h.gen != it.Gen || h.step != it.Step || !h.active() {
		e.log.Debug("dropping stale work item", "run_id", it.RunID, "item_step", it.Step, "head_step", h.step, "status", string(h.status))
		return nil
	}
	now := e.clock()
	if h.notBefore > now.UnixNano() {
		// A retry back-off not yet over (the item came early, e.g. from the sweeper).
		return e.dispatch(ctx, h, time.Duration(h.notBefore-now.UnixNano()))
	}
	if dequeueCount >= e.opts.MaxDequeueCount {
		cause := fmt.Sprintf("work item for step %d was delivered %d times without completing", h.step+1, dequeueCount)
		e.log.Error("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
		o := failure("orchestrator", OrchestratorName, cause)
		if _, err := e.commit(ctx, h, &o); err != nil && !errors.Is(err, errDropped) {
			return err
		}
		return nil
	}
	if h.status == StatusPending {
		// Record that the first visit starts (one head merge per run), so a status read
		// while the entrypoint runs says Running, as the spec's Pending/Running split asks.
		n, err := e.commit(ctx, h, &stepOutcome{kind: outBegin})
		if errors.Is(err, errDropped) {
			return nil
		}
		if err != nil {
			return err
		}
		h = n
	}
	deadline := now.Add(e.opts.StepBudget)
	for {
		next, more, err := e.runStep(ctx, h)
		if err != nil || !more {
			return err
		}
		h = next
		if ctx.Err() != nil || e.clock().After(deadline) {
			// Hand the run back to the queue; another worker (or this one) continues.
			return e.dispatch(context.WithoutCancel(ctx), h, 0)
		}
	}
}

// runStep runs and commits one step of h. more reports whether the run can go on at once
// (another node to visit, or an inbox event to apply).
func (e *Engine) runStep(ctx context.Context, h *head) (next *head, more bool, err error) {
	var o stepOutcome
	ctx, endStep := e.observeStepStarted(ctx, h)
	var committed *head
	defer func() { endStep(committed, &o) }()
	switch {
	case h.waiting != "":
		ev, found, err := e.findEvent(ctx, h, h.waiting)
		if err != nil {
			return nil, false, err
		}
		switch {
		case found:
			if o, err = e.applyEvent(ctx, h, ev); err != nil {
				return nil, false, err
			}
		case h.waitDeadline != 0 && e.clock().UnixNano() >= h.waitDeadline:
			o = e.timeout(h)
		default:
			return nil, false, nil // nothing to do: keep waiting
		}
	default:
		if o, err = e.visit(ctx, h); err != nil {
			return nil, false, err
		}
	}
	n, err := e.commit(ctx, h, &o)
	if errors.Is(err, errDropped) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	e.logStep(n, &o)
	committed = n
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
