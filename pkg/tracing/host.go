package tracing

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// HostObserver is a host.RunObserver making one span per hosted run: "invoke <graph>" or
// "stream <graph>", a child of the request's span, from OnRunStarted to OnRunCompleted or
// OnRunFailed (status Error with the root cause's type, never its text). A rejected request
// gets a zero-length span with the reason. Next, if set, is called too (e.g. the
// LoggingObserver).
type HostObserver struct {
	// Next receives every call after the span work; nil means none.
	Next host.RunObserver

	tracer trace.Tracer
	spans  sync.Map // run id → trace.Span
}

var _ host.RunObserver = (*HostObserver)(nil)

// NewHostObserver returns a HostObserver calling next (nil for none).
func NewHostObserver(opts Options, next host.RunObserver) *HostObserver {
	return &HostObserver{Next: next, tracer: opts.withDefaults().tracer()}
}

func hostAttrs(rc host.RunContext) []attribute.KeyValue {
	a := []attribute.KeyValue{attribute.String(AttrGraph, rc.GraphName), attribute.String(AttrEndpoint, rc.Endpoint),
		attribute.String(AttrRunID, rc.RunID)}
	if rc.ThreadID != "" {
		a = append(a, attribute.String(AttrThreadID, rc.ThreadID))
	}
	return a
}

// OnRunStarted starts the run's span.
func (o *HostObserver) OnRunStarted(ctx context.Context, rc host.RunContext) {
	_, span := o.tracer.Start(ctx, rc.Endpoint+" "+rc.GraphName, trace.WithAttributes(hostAttrs(rc)...))
	o.spans.Store(rc.RunID, span)
	if o.Next != nil {
		o.Next.OnRunStarted(ctx, rc)
	}
}

// OnRunCompleted ends the run's span.
func (o *HostObserver) OnRunCompleted(ctx context.Context, rc host.RunContext) {
	if s, ok := o.spans.LoadAndDelete(rc.RunID); ok {
		s.(trace.Span).End()
	}
	if o.Next != nil {
		o.Next.OnRunCompleted(ctx, rc)
	}
}

// OnRunFailed ends the run's span with status Error.
func (o *HostObserver) OnRunFailed(ctx context.Context, rc host.RunContext, err error) {
	if s, ok := o.spans.LoadAndDelete(rc.RunID); ok {
		span := s.(trace.Span)
		span.SetAttributes(attribute.String(AttrErrorType, errorType(err)))
		span.SetStatus(codes.Error, errorType(err))
		span.End()
	}
	if o.Next != nil {
		o.Next.OnRunFailed(ctx, rc, err)
	}
}

// OnRunRejected records a zero-length span with the reason.
func (o *HostObserver) OnRunRejected(ctx context.Context, rc host.RunContext, reason host.RejectReason) {
	_, span := o.tracer.Start(ctx, rc.Endpoint+" "+rc.GraphName,
		trace.WithAttributes(append(hostAttrs(rc), attribute.String(AttrReason, string(reason)))...))
	span.SetStatus(codes.Error, string(reason))
	span.End()
	if o.Next != nil {
		o.Next.OnRunRejected(ctx, rc, reason)
	}
}
