package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// workItem is the queue message of a run's step, JSON-encoded:
//
//	{"v":1,"run_id":"<instance id>","gen":<generation>,"step":<step>,"nonce":"<run nonce>"}
//
// plus "retry":<n> on a copy re-enqueued after n failed handlings, and "vw":<n> on one put back
// n times because the run's graph version is not registered (version.go), and "cx":"<due row
// key>" on the item of a cancel's intent (cancel_family.go). It asks: "if run_id is
// still the run with this generation and nonce, at step step, run it". A fan-out's branch has
// its own message, these members and its branch's (branchWork, branch_worker.go). Messages are
// enqueued as raw JSON; a queue backend whose consumer is the Functions queue trigger
// base64-encodes them (HandleWorkItem accepts both forms).
type workItem struct {
	V     int    `json:"v"`
	RunID string `json:"run_id"`
	Gen   int64  `json:"gen"`
	Step  int64  `json:"step"`
	Nonce string `json:"nonce,omitempty"`
	// Retry counts the handlings of this item that failed with an error and re-enqueued it.
	Retry int64 `json:"retry,omitempty"`
	// Trace is the run's trace context (optional; items without it decode as before).
	Trace string `json:"tp,omitempty"`
	// VersionWaits counts how often this item was put back because the run's graph version
	// was not registered (version.go); it sets the back-off.
	VersionWaits int64 `json:"vw,omitempty"`
	// Cancel, on the item of a cancel's intent to cancel its run's child, is the key of the
	// intent's due row (cancel_family.go); the run is then finished, at step Step.
	Cancel string `json:"cx,omitempty"`
}

// errInvalidWorkItem reports a queue message that is not a work item.
var errInvalidWorkItem = errors.New("engine: invalid work item")

// HandleWorkItem processes one work item: the entry point of a queue trigger (the
// fg_orchestrator function) and of the embedded dispatcher. body is the message text (the
// JSON work item, or its base64 form); dequeueCount is the queue's delivery count.
//
// It returns nil when the message is done and should be deleted: the step ran and was
// committed and whatever comes next is durably on the queue (the next item, a retry or
// wait-timeout timer) or needs nothing (finished, waiting for an event), or the item was
// stale or a duplicate (its run moved on), or malformed (logged and dropped), or the run's
// graph version is not registered here and the item is back on the queue with a back-off
// (the run is not failed; see version.go). A non-nil
// error means "retry later" (storage unavailable, shutdown); the message then stays in the
// queue and comes back after its visibility timeout.
//
// Recovery rides on this: a redelivered item (dequeueCount > 1, or a retried copy) whose
// step has passed means its worker died or failed after moving the run on, so it carries
// the run's current step instead of being dropped; should another worker carry that step
// too, the conditional commit keeps one of them.
//
// Poison is counted on the run, not from dequeueCount, which cannot tell a worker that died
// from a handling that failed on a storage error: a redelivered start takes a hold on the
// step before user code runs (the step's commit clears it, an ending without a commit
// releases it), the next start counts a hold it finds past its lease as a death, and the
// step fails its run once it was started MaxStepStarts times without completing. See the
// kill limit below.
func (e *Engine) HandleWorkItem(ctx context.Context, body []byte, dequeueCount int64) error {
	it, br, err := decodeWorkItem(body)
	if err != nil {
		e.log.Error("dropping malformed work item", "error", err.Error(), "orchestrator", OrchestratorName)
		return nil
	}
	if br != nil {
		return e.processBranch(e.obs.extract(ctx, br.Trace), *br, dequeueCount) // a fan-out's branch (branch_worker.go)
	}
	if it.Cancel != "" {
		return e.cancelItem(ctx, it) // the cancel of a family, down its chain (cancel_family.go)
	}
	return e.process(e.obs.extract(ctx, it.Trace), it, dequeueCount)
}

// process runs a run's work item: read the head, check the item is current (or adopt the
// current step, for a redelivery), resolve the run's graph version (stepCtx), begin the step
// (judge the hold a previous start left, take one), then run steps in-process — one commit
// per step — until the run finishes, waits, backs off, or the step budget is spent (then the
// run goes back to the queue).
func (e *Engine) process(ctx context.Context, it workItem, dequeueCount int64) error {
	h, err := e.getHead(ctx, it.RunID)
	if errors.Is(err, ErrNotFound) {
		e.log.Debug("dropping work item of a purged run", "run_id", it.RunID)
		return nil
	}
	if err != nil {
		return err
	}
	if h.gen != it.Gen || (it.Nonce != "" && h.nonce != it.Nonce) || !h.active() {
		e.log.Debug("dropping work item of another or a finished run", "run_id", it.RunID, "status", string(h.status))
		return nil
	}
	redelivered := dequeueCount > 1 || it.Retry > 0
	if h.step != it.Step {
		if !redelivered {
			e.log.Debug("dropping stale work item", "run_id", it.RunID, "item_step", it.Step, "head_step", h.step)
			return nil
		}
		e.log.Info("redelivered work item carries the run's current step", "run_id", it.RunID, "item_step", it.Step, "head_step", h.step, "dequeue_count", dequeueCount)
	}
	now := e.clock().UnixNano()
	if h.notBefore > now {
		// A retry back-off not yet over (the timer came early): back to the queue.
		return e.dispatch(ctx, h, time.Duration(h.notBefore-now))
	}
	if h.waiting != "" && !h.runnable {
		if h.waitDeadline == 0 {
			return nil // waiting for an event; the event's dispatch wakes the run
		}
		if h.waitDeadline > now && h.pending == 0 {
			// The wait-timeout timer came early (clock skew, whole-second visibility).
			return e.dispatch(ctx, h, time.Duration(h.waitDeadline-now))
		}
	}
	if h.branchCount > 0 { // a fan-out's join (branch.go)
		if done, err := e.awaitBranches(ctx, h); done || err != nil {
			return err
		}
	}
	sc, err := e.stepCtxOf(h)
	if err != nil {
		return e.awaitVersion(ctx, h, it) // not this process's version: no user code, no poison count
	}
	h, held, err := e.begin(ctx, h, redelivered)
	if held != nil {
		defer e.holds.abandon(held.id) // a handling taken down mid-step is a death: its lease judges it
	}
	if err != nil || h == nil {
		return err
	}
	deadline := e.clock().Add(e.opts.StepBudget)
	for {
		next, more, err := e.runStep(ctx, sc, h)
		if err != nil {
			if held != nil {
				e.releaseHold(ctx, held, err) // an error return is not a death
			}
			return err
		}
		if held != nil && (next == nil || next.holder != held.id) {
			if next == nil {
				e.releaseHold(ctx, held, nil) // ended without a commit: nothing to wait for, or dropped
			} else {
				e.holds.finish(held.id, true) // the commit cleared it
			}
			held = nil
		}
		if !more {
			return nil
		}
		h = next
		if ctx.Err() != nil || e.clock().After(deadline) {
			// Hand the run back to the queue; another worker (or this one) continues.
			return e.dispatch(context.WithoutCancel(ctx), h, 0)
		}
	}
}

// The kill limit. A delivery cannot tell a worker that died (a handler that crashes the
// process, runs it out of memory or past functionTimeout) from a handling that failed on a
// storage error: both come back as a redelivery. Only the first may fail a run, so a start
// is counted as a death only where its worker can have died holding the step — never for a
// handling that failed and came back — and the count lives on the run, judged by the next
// start from what the last one left on the head (hold.go):
//
//   - a start that may be a restart takes a hold before any user code runs: the head's
//     Holder (a random id) and HoldUntil (its lease, Options.StepLease), in the one merge
//     that also turns a Pending run Running; a first delivery with a clean head writes
//     nothing, so a steady step is still one batch;
//   - every commit clears the hold and the count: the step completed;
//   - a start that ends without a commit (an error, a storage failure, a step dropped or
//     with nothing to do) releases its hold, recognised by its id; a release that cannot be
//     written needs no second chance: the hold is then judged by its lease;
//   - the next start that finds a hold counts one death when the hold is past its lease and
//     not one this engine knows as its own running or failed handling's; then it takes the
//     step's hold itself. A hold within its lease is taken over uncounted: its holder failed
//     and came back, or may still run (a duplicate delivery).
//
// The step fails its run once it was started MaxStepStarts times without completing: the
// deaths counted, plus the start before them (a first delivery holds nothing, so its own
// death is inferred from the redelivery that follows it, and at least one death must be
// counted). A run whose handlings only fail does not get there: a failed handling's hold is
// released, or known to this process, or back within its lease when its item returns,
// whatever storage did to the release. A hold's lease must be what a live holder may take: a dead worker's item
// comes back only after its visibility timeout (embedded: VisibilityTimeout; the lease's
// default is half of it) or, under the Functions host, after functionTimeout killed it (the
// lease launch sets).
//
// What still miscounts, by one start at most: a handling that fails, cannot release its
// hold, and whose item comes back past the lease to another process (this one remembers
// its own); a worker that crashes quickly and whose item comes back within the lease (not
// counted: under the Functions host a process that crashes and restarts within
// functionTimeout looks like a failure); and a redelivered item whose worker died after
// handing the run on (the next step's first start, which held nothing, is inferred).

// failPoison fails h's run because its current step was started starts times without
// completing. A run that moved on meanwhile is left alone.
func (e *Engine) failPoison(ctx context.Context, h *head, starts int64) error {
	cause := fmt.Sprintf("step %d (node '%s') was started %d times without completing: its worker died or timed out each time",
		h.step+1, h.node, starts)
	e.log.Error("orchestrator failed: graph="+h.graph+" hash="+h.hash, "run_id", h.runID, "error", cause)
	f := failure("orchestrator", OrchestratorName, cause)
	f.node = h.node
	var o outcome = f
	ctx, endStep := e.observeStepStarted(ctx, h)
	n, err := e.commit(ctx, h, &o, nil) // a poisoned step fails the run: no state
	if err != nil {
		endStep(nil, nil)
		if errors.Is(err, errDropped) {
			return nil
		}
		return err
	}
	endStep(n, o) // observed as Failed, like any failing step
	return nil
}

// releaseTimeout bounds releaseHold, which runs after the handling's context may be done.
const releaseTimeout = 10 * time.Second

// awaitVersion parks h, whose graph version is not registered: it marks the head (once) and
// puts the work item back on the queue after a back-off. It returns nil once the item is on
// the queue, so the delivery that brought it is done.
func (e *Engine) awaitVersion(ctx context.Context, h *head, it workItem) error {
	ctx = context.WithoutCancel(ctx)
	if !h.awaitVersion && h.etag != "" {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: h.runID, RowKey: headRowKey,
			Properties: map[string]any{pAwaitVersion: true}}}})
		switch {
		case err == nil:
			e.changes.notify(h.runID)
		case errors.Is(err, ErrConflict), errors.Is(err, ErrNotFound):
			// Someone else wrote the head: the item below is dropped if the run moved on.
		default:
			e.log.Warn("mark run waiting for its graph version", "run_id", h.runID, "error", err.Error())
		}
	}
	next := itemOf(h)
	next.VersionWaits = it.VersionWaits + 1
	delay := versionBackoff(it.VersionWaits)
	if err := e.dispatchItem(ctx, next, delay); err != nil {
		return err
	}
	level := e.log.Debug
	if it.VersionWaits == 0 {
		level = e.log.Warn
	}
	level("run waits for a graph version this process does not have", "run_id", h.runID, "graph", h.graph,
		"graph_version", h.version, "graph_hash", h.hash, "retry_in", delay.String())
	return nil
}

// versionBackoff returns the delay before the next look at a run that waited n times already.
func versionBackoff(n int64) time.Duration {
	d := versionRetryMin
	for i := int64(0); i < n && d < versionRetryMax; i++ {
		d *= 2
	}
	return min(d, versionRetryMax)
}

// maxTimerDelay is the longest delay the engine gives a message: Azure's 7 days less a
// margin. A longer timer comes early and is re-enqueued with the rest.
const maxTimerDelay = MaxDelay - time.Hour

// dispatch enqueues a work item for h's next step. A delayed item also schedules a local
// wake-up so the embedded dispatcher sees it when it becomes visible.
func (e *Engine) dispatch(ctx context.Context, h *head, delay time.Duration) error {
	return e.dispatchItem(ctx, itemOf(h), delay)
}

// dispatchItem enqueues it after delay, as dispatch does.
func (e *Engine) dispatchItem(ctx context.Context, it workItem, delay time.Duration) error {
	return e.enqueue(ctx, encodeWorkItem(it), it, delay)
}

// enqueue puts body, the message of it (or of a branch of it), on the queue after delay.
func (e *Engine) enqueue(ctx context.Context, body []byte, it workItem, delay time.Duration) error {
	delay = min(max(delay, 0), maxTimerDelay)
	if err := e.queue.Enqueue(ctx, body, delay); err != nil {
		return fmt.Errorf("dispatch run=%s step=%d: %w", it.RunID, it.Step, err)
	}
	if delay <= 0 {
		e.wake()
	} else if e.started.Load() {
		time.AfterFunc(delay, e.wake)
	}
	return nil
}

// wake nudges one idle dispatcher worker.
func (e *Engine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// itemOf returns the work item of h's next step.
func itemOf(h *head) workItem {
	return workItem{V: 1, RunID: h.runID, Gen: h.gen, Step: h.step, Nonce: h.nonce, Trace: h.trace}
}
