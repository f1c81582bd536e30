package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// ObservedKind says what happened to a run, in a RunEvent.
type ObservedKind string

// What an Observer is told. A step ends in exactly one of StepCommitted (the run goes on),
// Waiting, EventApplied, Retried, Failed or Completed; a step whose commit was dropped (a
// stale or duplicate attempt) ends with StepDropped.
const (
	ObservedRunStarted    ObservedKind = "run_started"
	ObservedStepCommitted ObservedKind = "step_committed"
	ObservedWaiting       ObservedKind = "waiting"
	ObservedEventApplied  ObservedKind = "event_applied"
	ObservedRetried       ObservedKind = "retried"
	ObservedFailed        ObservedKind = "failed"
	ObservedCompleted     ObservedKind = "completed"
	ObservedCancelled     ObservedKind = "cancelled"
	ObservedStepDropped   ObservedKind = "step_dropped"
)

// RunEvent describes one observed moment of a run. It never carries state, payloads or
// secrets.
type RunEvent struct {
	// Kind says what happened.
	Kind ObservedKind
	// RunID is the run's instance id.
	RunID string
	// Graph is the run's graph name.
	Graph string
	// GraphHash is the graph version the run is pinned to.
	GraphHash string
	// Generation of the instance id (1 for its first run).
	Generation int64
	// Step is the step's sequence number (0 at RunStarted).
	Step int64
	// Node is the node of the step (the entrypoint at RunStarted).
	Node string
	// Event is the awaited (Waiting) or applied (EventApplied) event name.
	Event string
	// Attempt counts executions of the step, from 1.
	Attempt int
	// Failure is the failure message (Failed) or the retried error (Retried).
	Failure string
	// Delay is the retry back-off (Retried).
	Delay time.Duration
}

// Observer sees a durable run's lifecycle: started, each step (committed, waiting, event
// applied, retried, failed, completed) and cancelled. Calls are synchronous on the worker's
// goroutine; panics are recovered and logged. Steps run at least once, so a step may be
// observed more than once (with StepDropped for an attempt whose commit lost).
//
// The two context-returning methods let an observer trace: RunStarted's context is the run's
// trace context, kept with the run (see TraceCarrier) so that every step of the run, on any
// worker, is a child of it; StepStarted's context is passed to the handlers and to StepEnded.
// Return ctx unchanged when not tracing.
type Observer interface {
	// RunStarted is called when StartRun created a run, with the caller's context.
	RunStarted(ctx context.Context, ev RunEvent) context.Context
	// StepStarted is called when a worker is about to run a step.
	StepStarted(ctx context.Context, ev RunEvent) context.Context
	// StepEnded is called when the step is over; ev.Kind says how.
	StepEnded(ctx context.Context, ev RunEvent)
	// Cancelled is called when CancelRun terminated a run.
	Cancelled(ctx context.Context, ev RunEvent)
}

// TraceCarrier is an optional interface of an Observer: it carries a run's trace context
// through storage and work items (the work item's optional "tp" field), as text.
type TraceCarrier interface {
	// InjectTrace returns the trace context of ctx as text ("" for none).
	InjectTrace(ctx context.Context) string
	// ExtractTrace returns ctx carrying the trace context in text.
	ExtractTrace(ctx context.Context, text string) context.Context
}

// NopObserver ignores every call. It is the default.
type NopObserver struct{}

// RunStarted returns ctx.
func (NopObserver) RunStarted(ctx context.Context, _ RunEvent) context.Context { return ctx }

// StepStarted returns ctx.
func (NopObserver) StepStarted(ctx context.Context, _ RunEvent) context.Context { return ctx }

// StepEnded does nothing.
func (NopObserver) StepEnded(context.Context, RunEvent) {}

// Cancelled does nothing.
func (NopObserver) Cancelled(context.Context, RunEvent) {}

// observer wraps the configured Observer: panics are contained, tracing is optional.
type observer struct {
	obs     Observer
	carrier TraceCarrier
	log     *slog.Logger
	// nop: nobody listens (no Observer, or NopObserver), so the hooks cost nothing: no event,
	// no closure, no deferred recover.
	nop bool
}

func newObserver(o Observer, log *slog.Logger) observer {
	nop := false
	switch o.(type) {
	case nil, NopObserver, *NopObserver:
		o, nop = NopObserver{}, true
	}
	c, _ := o.(TraceCarrier)
	return observer{obs: o, carrier: c, log: log, nop: nop}
}

// endNop is the step end of an engine nobody observes.
func endNop(*head, outcome) {}

func (o observer) guard(hook string, ev *RunEvent) {
	if p := recover(); p != nil {
		o.log.Error("engine observer panicked", "hook", hook, "run_id", ev.RunID, "graph", ev.Graph,
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
}

func (o observer) ctxCall(hook string, ctx context.Context, ev RunEvent, fn func(context.Context, RunEvent) context.Context) (out context.Context) {
	out = ctx
	defer o.guard(hook, &ev)
	if c := fn(ctx, ev); c != nil {
		out = c
	}
	return out
}

func (o observer) call(hook string, ctx context.Context, ev RunEvent, fn func(context.Context, RunEvent)) {
	defer o.guard(hook, &ev)
	fn(ctx, ev)
}

func (o observer) inject(ctx context.Context) string {
	if o.carrier == nil {
		return ""
	}
	ev := RunEvent{}
	defer o.guard("inject", &ev)
	return o.carrier.InjectTrace(ctx)
}

func (o observer) extract(ctx context.Context, text string) context.Context {
	if o.carrier == nil || text == "" {
		return ctx
	}
	return o.ctxCall("extract", ctx, RunEvent{}, func(c context.Context, _ RunEvent) context.Context {
		return o.carrier.ExtractTrace(c, text)
	})
}

func headEvent(kind ObservedKind, h *head) RunEvent {
	return RunEvent{Kind: kind, RunID: h.runID, Graph: h.graph, GraphHash: h.hash, Generation: h.gen,
		Step: h.step, Node: h.node, Attempt: int(h.attempt) + 1}
}

// runStarted observes a new run and returns the trace text to keep with it.
func (e *Engine) observeRunStarted(ctx context.Context, h *head) string {
	if e.obs.nop {
		return ""
	}
	ctx = e.obs.ctxCall("run_started", ctx, headEvent(ObservedRunStarted, h), e.obs.obs.RunStarted)
	return e.obs.inject(ctx)
}

// observeStepStarted observes the start of the next step of h; the returned end observes its
// outcome (n is the committed head, nil when the commit was dropped or failed).
func (e *Engine) observeStepStarted(ctx context.Context, h *head) (context.Context, func(n *head, o outcome)) {
	if e.obs.nop {
		return ctx, endNop
	}
	ev := headEvent("", h)
	ev.Step = h.step + 1
	ctx = e.obs.ctxCall("step_started", ctx, ev, e.obs.obs.StepStarted)
	return ctx, func(n *head, o outcome) {
		ev := ev
		retry, _ := o.(*retryScheduled)
		applied, _ := o.(*eventApplied)
		switch {
		case n == nil || o == nil:
			ev.Kind = ObservedStepDropped
		case n.status == StatusCompleted:
			ev.Kind = ObservedCompleted
		case n.status == StatusFailed:
			ev.Kind = ObservedFailed
			ev.Failure, _ = failureText(o)
		case retry != nil:
			ev.Kind, ev.Failure, ev.Delay = ObservedRetried, retry.cause, retry.delay
		case applied != nil:
			ev.Kind, ev.Event = ObservedEventApplied, applied.event
		case n.waiting != "" && !n.runnable:
			ev.Kind, ev.Event = ObservedWaiting, n.waiting
		default:
			ev.Kind = ObservedStepCommitted
		}
		if o != nil && o.stepNode() != "" {
			ev.Node = o.stepNode()
		}
		e.obs.call("step_ended", ctx, ev, e.obs.obs.StepEnded)
	}
}

// observeCancelled observes a cancellation.
func (e *Engine) observeCancelled(ctx context.Context, runID, graph string) {
	if e.obs.nop {
		return
	}
	e.obs.call("cancelled", ctx, RunEvent{Kind: ObservedCancelled, RunID: runID, Graph: graph}, e.obs.obs.Cancelled)
}
