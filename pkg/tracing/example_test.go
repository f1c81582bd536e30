package tracing_test

import (
	"context"
	"fmt"
	"log/slog"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/tracing"
)

// The engine observer gives every step of a run a span under the run's span.
func ExampleNewEngineObserver() {
	exp := tracetest.NewInMemoryExporter()
	opts := tracing.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))}
	type S struct {
		N int `json:"n"`
	}
	b := durable.NewManifestBuilder[S]("count")
	b.SetEntrypoint("inc")
	_ = b.AddStep("inc", func(_ context.Context, s S) (S, error) { s.N++; return s, nil },
		durable.WithHandlerName("count.inc"), durable.Terminal())
	g, _ := b.Build()
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Observer: tracing.NewEngineObserver(opts, nil)})
	ctx := context.Background()
	_ = eng.Start(ctx)
	run, _ := eng.StartRun(ctx, engine.StartRunRequest{GraphName: "count", InstanceID: "c1"})
	_, _ = eng.WaitRun(ctx, run.InstanceID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	_ = eng.Close() // the worker returns after its observer calls, so every span has ended
	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name)
	}
	// Output:
	// durable.run count
	// durable.step inc
}

// The host observer makes a span per invoke; Middleware puts each request's span (and the
// caller's trace context) in the request's context.
func ExampleNewHostObserver() {
	opts := tracing.Options{} // the global TracerProvider
	app, _ := host.New(host.Options{Observer: tracing.NewHostObserver(opts, host.NewLoggingObserver(nil)),
		Logger: slog.New(slog.DiscardHandler)})
	handler := tracing.Middleware(app.FunctionApp().Standalone(funchost.StandaloneOptions{}), opts)
	_ = handler
	fmt.Println("ok")
	// Output: ok
}
