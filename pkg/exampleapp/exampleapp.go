// Package exampleapp builds funcgraph's example function app: the graphs and routes that
// `make run` serves and that the committed functions/ folder describes.
package exampleapp

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/memory"
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
}

// Build returns the example function app: the graph-hosting routes (health, health details,
// OpenAPI), the echo_agent graph (invoke, stream, thread state) and the durable runs API
// (function auth) over the three example durable graphs. The durable engine is the embedded
// in-memory one; Build starts it and it runs for the life of the process.
func Build(cfg Config) (*funchost.FunctionApp, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	app, err := host.New(host.Options{
		Logger:             logger,
		LockBackendSetting: cfg.LockBackendSetting,
		ThreadLock:         cfg.ThreadLock,
		Observer:           host.NewLoggingObserver(logger),
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
	if err := mountDurable(app, logger); err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	return app.FunctionApp(), nil
}

// mountDurable mounts the durable runs API for the example durable graphs on app.
func mountDurable(app *host.GraphHostApp, logger *slog.Logger) error {
	graphs, err := examples.All()
	if err != nil {
		return err
	}
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			return err
		}
	}
	eng, err := memory.NewEngine(reg, &durable.EngineOptions{Logger: logger})
	if err != nil {
		return err
	}
	svc, err := durable.NewService(durable.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: logger})
	if err != nil {
		return err
	}
	if err := svc.Mount(app, durable.MountOptions{}); err != nil {
		return err
	}
	return eng.Start(context.Background())
}
