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

// Span attribute keys.
const (
	AttrGraph      = "funcgraph.graph"
	AttrRunID      = "funcgraph.run_id"
	AttrNode       = "funcgraph.node"
	AttrStep       = "funcgraph.step"
	AttrAttempt    = "funcgraph.attempt"
	AttrEndpoint   = "funcgraph.endpoint"
	AttrThreadID   = "funcgraph.thread_id"
	AttrOutcome    = "funcgraph.outcome"
	AttrEvent      = "funcgraph.event"
	AttrErrorType  = "funcgraph.error_type"
	AttrReason     = "funcgraph.reject_reason"
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
