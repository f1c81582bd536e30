// Package tracing is the OpenTelemetry adapter of funcgraph's observers: a span per hosted
// invoke or stream (HostObserver), a span per durable run and per step (EngineObserver), and
// W3C trace context carried from the HTTP request that started a run (Middleware) into every
// step through the run's work items, so one trace shows a run end to end across workers.
//
// Start with NewEngineObserver for engine.Options.Observer, NewHostObserver for
// host.Options.Observer, and Middleware around the handler that serves the app. Each observer
// calls the next one it is given, so tracing sits in front of logging. The span attributes
// are the Attr constants.
//
// It uses the OpenTelemetry API only: spans go to whatever TracerProvider the binary installs
// (otel.SetTracerProvider, or Options.TracerProvider). Without one they are no-ops. The SDK
// and exporters belong in the binary (see pkg/exampleapp), not here; nor are logs or metrics
// (host.NewLoggingObserver logs runs).
package tracing
