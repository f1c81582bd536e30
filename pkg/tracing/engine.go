package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// EngineObserver is an engine.Observer and engine.TraceCarrier making a span "durable.run
// <graph>" when a run starts (a child of the caller's span, e.g. the HTTP request's; it marks
// the start and ends at once, since a run outlives any process) and a span "durable.step
// <node>" per step, a child of the run span on whichever worker runs it: the run span's
// context is kept with the run and carried by its work items. Steps end with the outcome
// (step_committed, waiting, event_applied, retried, failed, completed); failures set status
// Error. Next, if set, is called too.
type EngineObserver struct {
	// Next receives every call; nil means none.
	Next engine.Observer

	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

var (
	_ engine.Observer     = (*EngineObserver)(nil)
	_ engine.TraceCarrier = (*EngineObserver)(nil)
)

// NewEngineObserver returns an EngineObserver calling next (nil for none).
func NewEngineObserver(opts Options, next engine.Observer) *EngineObserver {
	opts = opts.withDefaults()
	return &EngineObserver{Next: next, tracer: opts.tracer(), prop: opts.Propagator}
}

func runAttrs(ev engine.RunEvent) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(AttrGraph, ev.Graph), attribute.String(AttrRunID, ev.RunID),
		attribute.String(AttrNode, ev.Node), attribute.Int64(AttrStep, ev.Step), attribute.Int64(AttrGeneration, ev.Generation)}
}

// RunStarted records the run span and returns its context.
func (o *EngineObserver) RunStarted(ctx context.Context, ev engine.RunEvent) context.Context {
	ctx, span := o.tracer.Start(ctx, "durable.run "+ev.Graph, trace.WithAttributes(runAttrs(ev)...))
	span.End()
	if o.Next != nil {
		ctx = o.Next.RunStarted(ctx, ev)
	}
	return ctx
}

// StepStarted starts the step span.
func (o *EngineObserver) StepStarted(ctx context.Context, ev engine.RunEvent) context.Context {
	ctx, _ = o.tracer.Start(ctx, "durable.step "+ev.Node,
		trace.WithAttributes(append(runAttrs(ev), attribute.Int(AttrAttempt, ev.Attempt))...))
	if o.Next != nil {
		ctx = o.Next.StepStarted(ctx, ev)
	}
	return ctx
}

// StepEnded ends the step span with the outcome.
func (o *EngineObserver) StepEnded(ctx context.Context, ev engine.RunEvent) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String(AttrOutcome, string(ev.Kind)), attribute.String(AttrNode, ev.Node))
	if ev.Event != "" {
		span.SetAttributes(attribute.String(AttrEvent, ev.Event))
	}
	switch ev.Kind {
	case engine.ObservedFailed:
		span.SetStatus(codes.Error, "run failed")
	case engine.ObservedRetried:
		span.SetStatus(codes.Error, "step retried")
	}
	span.End()
	if o.Next != nil {
		o.Next.StepEnded(ctx, ev)
	}
}

// Cancelled records a zero-length span under the caller's context.
func (o *EngineObserver) Cancelled(ctx context.Context, ev engine.RunEvent) {
	_, span := o.tracer.Start(ctx, "durable.cancel "+ev.Graph, trace.WithAttributes(runAttrs(ev)...))
	span.End()
	if o.Next != nil {
		o.Next.Cancelled(ctx, ev)
	}
}

// InjectTrace implements engine.TraceCarrier.
func (o *EngineObserver) InjectTrace(ctx context.Context) string { return injectText(o.prop, ctx) }

// ExtractTrace implements engine.TraceCarrier.
func (o *EngineObserver) ExtractTrace(ctx context.Context, text string) context.Context {
	return extractText(o.prop, ctx, text)
}
