// Package exampleapp builds funcgraph's example function app: the graphs and routes that
// `make run` serves and that the committed functions/ folder describes.
package exampleapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/tracing"
)

// Config configures the example app. The handler binary fills it from the environment.
type Config struct {
	// Logger is the app's logger; nil means slog.Default().
	Logger *slog.Logger
	// LockBackendSetting is the GRAPH_LOCK_BACKEND setting. A value other than "" or
	// "inprocess" makes Build fail while ThreadLock is unset (the in-process lock).
	LockBackendSetting string
	// ThreadLock serialises runs per thread; nil means the in-process lock.
	ThreadLock lock.ThreadLock
	// PlatformThreads stores the threads of the LangGraph-Platform-compatible routes; nil
	// means in process memory (tablethreads.Store keeps them in Azure Table storage).
	PlatformThreads threads.Store
	// TraceExporter turns OpenTelemetry tracing on: "" (default) off, "stdout" spans as JSON
	// on stderr (for `make run TRACE=stdout`). Other values fail Build.
	TraceExporter string
}

// Trace exporters of Config.TraceExporter.
const TraceStdout = "stdout"

// App is the built example app: its function app and the background work (the embedded
// durable engine) that Start runs and Close stops.
type App struct {
	// FunctionApp holds every route of the example app.
	FunctionApp *funchost.FunctionApp
	engine      *engine.Engine
	platform    *platform.Service
	closers     []func() error
}

// Build returns the example app: the graph-hosting routes (health, health details, OpenAPI),
// the echo_agent graph (invoke, stream, thread state), the LangGraph-Platform-compatible routes
// (platform_compat) and the durable runs API (function auth)
// over the three example durable graphs on the embedded in-memory engine. Nothing runs until
// Start, so building only to write function.json folders starts no goroutines.
func Build(cfg Config) (*App, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	tr, err := newTracing(cfg.TraceExporter)
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	var hostObs host.RunObserver = host.NewLoggingObserver(logger)
	var engineObs engine.Observer
	if tr != nil {
		hostObs = tracing.NewHostObserver(tr.opts, hostObs)
		engineObs = tracing.NewEngineObserver(tr.opts, nil)
	}
	app, err := host.New(host.Options{
		Logger:             logger,
		LockBackendSetting: cfg.LockBackendSetting,
		ThreadLock:         cfg.ThreadLock,
		Observer:           hostObs,
		PlatformCompat:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	err = app.Register(echoagent.New(echoagent.Options{}), echoagent.Name, host.RegisterOptions{
		Description:   "Chat echo with an in-memory checkpointer",
		RequestModel:  echoagent.State{},
		ResponseModel: echoagent.State{},
	})
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	eng, err := mountDurable(app, logger, engineObs)
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	plat, err := platform.Mount(app, platform.Options{Threads: cfg.PlatformThreads})
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	a := &App{FunctionApp: app.FunctionApp(), engine: eng, platform: plat}
	if tr != nil {
		a.OnClose(tr.shutdown)
	}
	return a, nil
}

// Start starts the embedded durable engine (dispatcher and sweeper). It runs until Close.
func (a *App) Start(ctx context.Context) error {
	if err := a.engine.Start(ctx); err != nil {
		return fmt.Errorf("start example app: %w", err)
	}
	return nil
}

// OnClose registers fn to run at Close, after the engine stops (e.g. closing a distributed
// thread lock so its leases are released).
func (a *App) OnClose(fn func() error) { a.closers = append(a.closers, fn) }

// Close stops the engine and runs the OnClose functions. Call it after the server stopped.
func (a *App) Close() error {
	errs := []error{a.engine.Close(), a.platform.Close()}
	for _, fn := range a.closers {
		errs = append(errs, fn())
	}
	return errors.Join(errs...)
}

// mountDurable mounts the durable runs API for the example durable graphs on app.
func mountDurable(app *host.GraphHostApp, logger *slog.Logger, obs engine.Observer) (*engine.Engine, error) {
	graphs, err := examples.All()
	if err != nil {
		return nil, err
	}
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			return nil, err
		}
	}
	eng, err := memory.NewEngine(reg, engine.EngineOptions{Logger: logger, Observer: obs})
	if err != nil {
		return nil, err
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := svc.Mount(app, runsapi.MountOptions{}); err != nil {
		return nil, err
	}
	return eng, nil
}

// Launch is the example app's launch.Builder: it builds the app from the entrypoint's settings.
func Launch(ctx context.Context, s launch.Settings) (*launch.App, error) {
	return LaunchTraced("")(ctx, s)
}

// LaunchTraced is Launch with Config.TraceExporter set to exporter (the handler binary reads
// it from FUNCGRAPH_TRACE_EXPORTER).
func LaunchTraced(exporter string) launch.Builder {
	return func(_ context.Context, s launch.Settings) (*launch.App, error) {
		return launchApp(s, exporter)
	}
}

func launchApp(s launch.Settings, exporter string) (*launch.App, error) {
	a, err := Build(Config{Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock, TraceExporter: exporter})
	if err != nil {
		return nil, err
	}
	return &launch.App{FunctionApp: a.FunctionApp, Start: a.Start, Close: a.Close}, nil
}
