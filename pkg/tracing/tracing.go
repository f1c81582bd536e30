package tracing

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName names the tracer of this package.
const InstrumentationName = "github.com/funcgraph/funcgraph/pkg/tracing"

// Span attribute keys, the names a trace query filters on.
const (
	// AttrGraph is the graph's name (every span).
	AttrGraph = "funcgraph.graph"
	// AttrRunID is the durable run's instance id, or the hosted run's id (every span).
	AttrRunID = "funcgraph.run_id"
	// AttrNode is the node a durable step ran (run and step spans).
	AttrNode = "funcgraph.node"
	// AttrStep is the step's sequence number in the durable run (run and step spans).
	AttrStep = "funcgraph.step"
	// AttrAttempt counts executions of the step, from 1 (step spans).
	AttrAttempt = "funcgraph.attempt"
	// AttrEndpoint is the hosted route that ran the graph, "invoke" or "stream" (hosted spans).
	AttrEndpoint = "funcgraph.endpoint"
	// AttrThreadID is the hosted run's thread, when it has one (hosted spans).
	AttrThreadID = "funcgraph.thread_id"
	// AttrOutcome is how a durable step ended (an engine.ObservedKind: step_committed,
	// waiting, retried, failed, completed, …).
	AttrOutcome = "funcgraph.outcome"
	// AttrEvent is the event a durable step awaits or applied, when it has one.
	AttrEvent = "funcgraph.event"
	// AttrErrorType is the Go type of a failed hosted run's root error, never its text.
	AttrErrorType = "funcgraph.error_type"
	// AttrReason is why a hosted run was rejected (host.RejectReason).
	AttrReason = "funcgraph.reject_reason"
	// AttrGeneration is the generation of the durable run's instance id, 1 for its first run
	// (run and step spans).
	AttrGeneration = "funcgraph.generation"
)

// Options configures the observers and the middleware. The zero value is valid.
type Options struct {
	// TracerProvider makes the tracer (default otel.GetTracerProvider()).
	TracerProvider trace.TracerProvider
	// Propagator carries trace context in HTTP headers and work items (default W3C
	// propagation.TraceContext).
	Propagator propagation.TextMapPropagator
}

// Validate reports options that cannot work; every zero field has a default, so it never fails
// today. It exists so that every config struct of funcgraph reads the same.
func (o Options) Validate() error { return nil }

func (o Options) withDefaults() Options {
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.TraceContext{}
	}
	return o
}

func (o Options) tracer() trace.Tracer { return o.TracerProvider.Tracer(InstrumentationName) }

// Middleware extracts the trace context of incoming requests (traceparent, tracestate) and
// wraps each in a server span "<METHOD> <path>", so that hosted runs and durable runs started
// by the request are its children. Wrap the standalone handler with it.
func Middleware(next http.Handler, opts Options) http.Handler {
	opts = opts.withDefaults()
	tr := opts.tracer()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := opts.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tr.Start(ctx, r.Method+" "+r.URL.Path, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// errorType names the root cause's type, through fmt and errors.Join wrappers, never the
// error's text (which may hold input or secrets).
func errorType(err error) string {
	for {
		switch err.(type) {
		case nil:
			return ""
		}
		name := typeName(err)
		if name != "*fmt.wrapError" && name != "*fmt.wrapErrors" && name != "*errors.joinError" {
			return name
		}
		if u := errors.Unwrap(err); u != nil {
			err = u
			continue
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
			err = j.Unwrap()[0]
			continue
		}
		return name
	}
}

// injectText returns the trace context of ctx as "traceparent[ tracestate]".
func injectText(p propagation.TextMapPropagator, ctx context.Context) string {
	c := propagation.MapCarrier{}
	p.Inject(ctx, c)
	tp := c.Get("traceparent")
	if tp == "" {
		return ""
	}
	if ts := c.Get("tracestate"); ts != "" {
		return tp + " " + ts
	}
	return tp
}

// extractText is injectText's inverse.
func extractText(p propagation.TextMapPropagator, ctx context.Context, text string) context.Context {
	tp, ts, _ := strings.Cut(text, " ")
	c := propagation.MapCarrier{"traceparent": tp}
	if ts != "" {
		c["tracestate"] = ts
	}
	return p.Extract(ctx, c)
}
