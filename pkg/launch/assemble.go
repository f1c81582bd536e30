package launch

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// Spec describes an app for Assemble: what it serves. Where its stores live is not part of
// it: Assemble takes every store from the Settings.
type Spec struct {
	// Host configures the hosting app. Unset, its Logger, LockBackendSetting, ThreadLock,
	// MaxWait, Isolation, MemoryBudget and ResponseBudget come from the settings (the
	// platform routes take the last three from it too, the runs API its ResponseBudget);
	// PlatformCompat is set when Platform is.
	Host host.Options
	// Hosted lists the graphs served at /api/graphs/<name>/invoke, /stream and
	// /threads/{thread_id}/state, in order.
	Hosted []Hosted
	// Durable lists the durable graphs run on the engine (runs API, worker functions).
	Durable []durable.Graph
	// DurableOptions tune the engine, the runs API and its mount.
	DurableOptions DurableOptions
	// Platform mounts the LangGraph-Platform-compatible routes, with their threads in
	// Settings.Threads (process memory when nil) and their background runs on the durable
	// engine.
	Platform bool
	// PlatformOptions tune the platform routes; Threads, Isolation and NewRunBackend are
	// filled in, and Durable (the durable graphs as assistants, platformruns.NewAssistants)
	// when unset. Settings.Isolation and Settings.MemoryBudget also go to the runs API
	// (DurableOptions.API) when unset.
	PlatformOptions platform.Options
}

// Hosted is one hosted graph of a Spec.
type Hosted struct {
	// Name is the graph's route name.
	Name string
	// Graph is the graph (host.Func turns a plain function into one).
	Graph host.InvocableGraph
	// Options are its registration options.
	Options host.RegisterOptions
}

// Assembly is an assembled app: the hosting app with every route, the durable engine (nil
// when the app has no durable graph and no platform routes) and the platform routes (nil
// unless Spec.Platform). App returns what a Builder hands back.
type Assembly struct {
	// Host is the hosting app; add routes to its FunctionApp before serving.
	Host *host.GraphHostApp
	// Engine runs the durable graphs (and the platform's background runs).
	Engine *engine.Engine
	// Platform serves the LangGraph-Platform-compatible routes.
	Platform *platform.Service
	// Registry holds the durable graphs the engine runs (nil without an engine), for the
	// other surfaces that serve them (e.g. package a2aserver).
	Registry *durable.Registry

	dispatch bool
	closers  []func() error
}

// Assemble builds the app that spec describes on the stores of s: the hosting app and its
// graphs, the durable engine over s.Durable (in-memory twins when s has none) with the runs
// API and the worker functions (fg_orchestrator, fg_repair), and the platform routes with
// their threads in s.Threads and their background runs on the engine. Like a Builder it
// starts nothing: the returned App's Start runs the engine's dispatcher where
// Settings.Durable says so.
func Assemble(s Settings, spec Spec) (*Assembly, error) {
	ho := spec.Host
	if ho.Logger == nil {
		ho.Logger = s.Logger
	}
	if ho.LockBackendSetting == "" {
		ho.LockBackendSetting = s.LockBackend
	}
	if ho.ThreadLock == nil {
		ho.ThreadLock = s.ThreadLock
	}
	if ho.MaxWait == 0 {
		ho.MaxWait = s.MaxWait
	}
	if ho.Isolation == nil {
		ho.Isolation = s.Isolation
	}
	if ho.MemoryBudget == nil {
		ho.MemoryBudget = s.MemoryBudget
	}
	if ho.ResponseBudget == nil {
		ho.ResponseBudget = s.ResponseBudget // the platform routes and the runs API share it
	}
	ho.PlatformCompat = ho.PlatformCompat || spec.Platform
	h, err := host.New(ho)
	if err != nil {
		return nil, fmt.Errorf("assemble app: %w", err)
	}
	for _, g := range spec.Hosted {
		if err := h.Register(g.Graph, g.Name, g.Options); err != nil {
			return nil, fmt.Errorf("assemble app: %w", err)
		}
	}
	a := &Assembly{Host: h}
	if err := a.mount(s, spec); err != nil {
		return nil, err
	}
	return a, nil
}

// mount runs spec's durable graphs (and the platform's background runs) on an engine over
// s.Durable, mounted on a.Host, then the platform routes.
func (a *Assembly) mount(s Settings, spec Spec) error {
	if len(spec.Durable) == 0 && !spec.Platform {
		return nil
	}
	reg := durable.NewRegistry()
	for _, g := range spec.Durable {
		if err := reg.Register(g); err != nil {
			return fmt.Errorf("assemble app: %w", err)
		}
	}
	opts := spec.DurableOptions
	var bg *platformruns.Backend
	if spec.Platform {
		var err error
		if bg, err = platformruns.Register(reg); err != nil {
			return fmt.Errorf("assemble app: %w", err)
		}
		if _, ok := opts.Engine.Policies[platformruns.GraphName]; !ok {
			policies := maps.Clone(opts.Engine.Policies) // the caller's map stays as it was
			if policies == nil {
				policies = map[string]engine.GraphPolicy{}
			}
			policies[platformruns.GraphName] = platformruns.Policy
			opts.Engine.Policies = policies
		}
	}
	if opts.Engine.Logger == nil {
		opts.Engine.Logger = s.Logger
	}
	if opts.API.Logger == nil {
		opts.API.Logger = s.Logger
	}
	if opts.API.Isolation == nil {
		opts.API.Isolation = s.Isolation
	}
	if opts.API.MemoryBudget == nil {
		opts.API.MemoryBudget = s.MemoryBudget
	}
	st := s.Durable.OrMemory()
	eng, err := MountDurable(st, a.Host, reg, opts)
	if err != nil {
		return err
	}
	a.Engine, a.Registry, a.dispatch = eng, reg, st.EmbeddedDispatcher
	if spec.Platform {
		po := spec.PlatformOptions
		if po.Threads == nil {
			po.Threads = s.Threads
		}
		if po.Isolation == nil {
			po.Isolation = s.Isolation
		}
		po.NewRunBackend = bg.Bind(eng)
		if po.Durable == nil && len(spec.Durable) > 0 {
			po.Durable = platformruns.NewAssistants(eng, reg.Public())
		}
		if a.Platform, err = platform.Mount(a.Host, po); err != nil {
			_ = eng.Close()
			return fmt.Errorf("assemble app: %w", err)
		}
	}
	return nil
}

// OnClose registers fn to run at Close, after the engine and the platform routes stopped
// (e.g. an exporter's shutdown).
func (a *Assembly) OnClose(fn func() error) { a.closers = append(a.closers, fn) }

// Start starts the embedded durable engine's dispatcher and sweeper where the settings ask
// for it (not under the Functions host with Azure storage: there the queue trigger and the
// repair timer deliver the work). It returns promptly; the work runs until Close.
func (a *Assembly) Start(ctx context.Context) error {
	if a.Engine == nil || !a.dispatch {
		return nil
	}
	if err := a.Engine.Start(ctx); err != nil {
		return fmt.Errorf("start app: %w", err)
	}
	return nil
}

// Close stops the engine and the platform routes, then runs the OnClose functions. Call it
// after the server stopped.
func (a *Assembly) Close() error {
	var errs []error
	if a.Engine != nil {
		errs = append(errs, a.Engine.Close())
	}
	if a.Platform != nil {
		errs = append(errs, a.Platform.Close())
	}
	for _, fn := range a.closers {
		errs = append(errs, fn())
	}
	return errors.Join(errs...)
}

// App returns the App a Builder hands back: every route, Start and Close.
func (a *Assembly) App() *App {
	return &App{FunctionApp: a.Host.FunctionApp(), Start: a.Start, Close: a.Close}
}
