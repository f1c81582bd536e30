package exampleapp

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/funcgraph/funcgraph/pkg/tracing"
)

// appTracing is the OpenTelemetry SDK of the example app: the library packages use the API
// only; the provider and exporter live here, in the binary's app.
type appTracing struct {
	opts     tracing.Options
	provider *sdktrace.TracerProvider
}

// newTracing returns nil for "" (tracing off).
func newTracing(exporter string) (*appTracing, error) {
	switch exporter {
	case "":
		return nil, nil
	case TraceStdout:
		exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
		if err != nil {
			return nil, fmt.Errorf("new stdout trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
		return &appTracing{opts: tracing.Options{TracerProvider: tp}, provider: tp}, nil
	}
	return nil, fmt.Errorf("unknown trace exporter %q (want \"\" or %q)", exporter, TraceStdout)
}

func (t *appTracing) shutdown() error { return t.provider.Shutdown(context.Background()) }
