package exampleapp

import (
	"context"
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/examples/tickets"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
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
	// means in process memory (launch.Settings.Threads keeps them in Azure Table storage).
	PlatformThreads threads.Store
	// Checkpointer keeps echo_agent's checkpoints (its messages and state history); nil means
	// in process memory (launch.Settings.Checkpoints keeps them in Azure Blob storage).
	Checkpointer checkpoint.Saver
	// Durable is the durable engine's storage (runs API and the platform's background runs);
	// a zero value means fresh in-memory twins with the embedded dispatcher
	// (launch.Settings.Durable picks Azure when storage is configured).
	Durable launch.Durable
	// Isolation scopes threads and runs to their owner (FUNCGRAPH_USER_ISOLATION, see
	// package isolation); nil means off.
	Isolation *isolation.Isolation
	// MaxWait bounds the routes' waits for a run (FUNCGRAPH_MAX_WAIT, host.Options.MaxWait); 0
	// means host.DefaultMaxWait.
	MaxWait time.Duration
	// MemoryBudget is the byte budget the in-memory stores above share
	// (launch.Settings.MemoryBudget); the routes refuse new work it has no room for before
	// reading the body. nil means none.
	MemoryBudget *membudget.Budget
	// Model is the assistant's model (assistantmodel.FromEnv); nil means examples.BuiltinModel, the
	// deterministic one that needs no vendor.
	Model model.Model
	// TicketsQueue is the queue whose messages start triage runs (package tickets: the
	// tickets_triage queue trigger, its function.json reading the name from
	// FUNCGRAPH_TICKETS_QUEUE); "" means DefaultTicketsQueue. LaunchWith names it after the
	// storage prefix, <FUNCGRAPH_STORAGE_PREFIX>-tickets.
	TicketsQueue string
	// TraceExporter turns OpenTelemetry tracing on: "" (default) off, "stdout" spans as JSON
	// on stderr (for `make run TRACE=stdout`). Other values fail Build.
	TraceExporter string
}

// ErrDistributedNeedsSharedStorage is wrapped by Build when a distributed thread lock is
// configured while the platform threads, the checkpointer or the durable engine's storage
// stay in process memory: every instance would then see its own threads and runs.
var ErrDistributedNeedsSharedStorage = errors.New("GRAPH_LOCK_BACKEND=distributed needs shared storage " +
	"for the platform threads, the checkpointer and the durable engine (runs and background runs); configure AzureWebJobsStorage so they live in Azure storage, or unset GRAPH_LOCK_BACKEND")

// Validate reports a distributed deployment (a ThreadLock) with in-process stores.
func (c Config) Validate() error {
	if c.ThreadLock == nil {
		return nil
	}
	var missing []string
	if c.PlatformThreads == nil {
		missing = append(missing, "platform threads")
	}
	if c.Checkpointer == nil {
		missing = append(missing, "checkpointer")
	}
	if c.Durable.Store == nil {
		missing = append(missing, "durable engine storage")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w (in process memory: %s)", ErrDistributedNeedsSharedStorage, strings.Join(missing, ", "))
	}
	return nil
}

// DefaultTicketsQueue is Config.TicketsQueue's default: the tickets queue of the default
// storage prefix.
const DefaultTicketsQueue = "funcgraph-tickets"

// EnvTicketsQueue is the app setting the staged tickets_triage function.json reads its queue
// name from; `stage` writes it, and under the Functions host it must name Config.TicketsQueue.
const EnvTicketsQueue = "FUNCGRAPH_TICKETS_QUEUE"

// Trace exporters of Config.TraceExporter.
const TraceStdout = "stdout"

// App is the built example app: its function app and the background work (the embedded
// durable engine) that Start runs and Close stops.
type App struct {
	// FunctionApp holds every route of the example app.
	FunctionApp *funchost.FunctionApp
	*launch.Assembly
}

// Build returns the example app: the graph-hosting routes (health, health details, OpenAPI),
// the echo_agent graph (invoke, stream, thread state), the LangGraph-Platform-compatible routes
// (platform_compat) and the durable runs API (function auth) over the five example durable
// graphs and the assistant agent (on cfg.Model), assembled by launch.Assemble on the stores cfg
// names (in-memory twins for those unset), and the tickets_triage queue trigger, whose messages
// start content_classifier runs (package tickets, docs/triggers.md). Nothing runs until Start, so building only to write
// function.json folders starts no goroutines.
func Build(cfg Config) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
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
	graphs, err := examples.All()
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	assistant, err := examples.Assistant(cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	graphs = append(graphs, assistant)
	s := launch.Settings{Logger: logger, LockBackend: cfg.LockBackendSetting, ThreadLock: cfg.ThreadLock,
		Durable: cfg.Durable, Threads: cfg.PlatformThreads, Isolation: cfg.Isolation, MaxWait: cfg.MaxWait,
		MemoryBudget: cfg.MemoryBudget}
	asm, err := launch.Assemble(s, launch.Spec{
		Host: host.Options{Observer: hostObs},
		Hosted: []launch.Hosted{{
			Name:  echoagent.Name,
			Graph: echoagent.New(echoagent.Options{Checkpointer: cfg.Checkpointer}),
			Options: host.RegisterOptions{
				Description:   "Chat echo with an in-memory checkpointer",
				RequestModel:  echoagent.State{},
				ResponseModel: echoagent.State{},
			},
		}},
		Durable: graphs,
		DurableOptions: launch.DurableOptions{
			Engine: engine.Options{Observer: engineObs},
			API:    runsapi.Options{AuthLevel: funchost.AuthFunction},
		},
		Platform: true,
	})
	if err != nil {
		return nil, fmt.Errorf("build example app: %w", err)
	}
	a := &App{FunctionApp: asm.Host.FunctionApp(), Assembly: asm}
	if err := registerA2A(a.FunctionApp, asm, cfg, logger); err != nil {
		_ = asm.Close()
		return nil, fmt.Errorf("build example app: %w", err)
	}
	if err := mountMCP(a.FunctionApp, asm, cfg.Isolation, logger); err != nil {
		_ = asm.Close()
		return nil, fmt.Errorf("build example app: %w", err)
	}
	if err := registerInfo(a.FunctionApp); err != nil {
		_ = asm.Close()
		return nil, fmt.Errorf("build example app: %w", err)
	}
	if err := registerTickets(a.FunctionApp, asm.Engine, cfg.TicketsQueue, logger); err != nil {
		_ = asm.Close()
		return nil, fmt.Errorf("build example app: %w", err)
	}
	if tr != nil {
		// Every route, in every mode (custom handler included), continues the caller's trace.
		a.FunctionApp.Use(func(h http.Handler) http.Handler { return tracing.Middleware(h, tr.opts) })
		a.OnClose(tr.shutdown)
	}
	return a, nil
}

// a2aTextFields are the input fields the example graphs' A2A text parts fill (docs/a2a.md);
// data_pipeline and the assistant take data parts only.
var a2aTextFields = map[string]string{
	"support_agent": "user_message", "content_classifier": "text", "reply_writer": "prompt", "research_agent": "question",
}

// registerA2A serves every public durable graph, and the hosted echo_agent, as an A2A v1.0
// agent (package a2aserver) at /api/a2a/{graph_name}, with function keys and the app's
// isolation.
func registerA2A(app *funchost.FunctionApp, asm *launch.Assembly, cfg Config, logger *slog.Logger) error {
	srv, err := a2aserver.New(a2aserver.Options{Runs: asm.Engine, Registry: asm.Registry, Hosted: asm.Host, TextFields: a2aTextFields,
		Isolation: cfg.Isolation, AuthLevel: funchost.AuthFunction, MaxWait: cfg.MaxWait, MemoryBudget: cfg.MemoryBudget, Logger: logger})
	if err != nil {
		return err
	}
	return srv.Register(app)
}

// registerTickets adds the tickets_triage queue trigger (package tickets) on queue (""
// means DefaultTicketsQueue), its name read from EnvTicketsQueue by the function.json.
func registerTickets(app *funchost.FunctionApp, eng *engine.Engine, queue string, logger *slog.Logger) error {
	if queue == "" {
		queue = DefaultTicketsQueue
	}
	if err := tickets.Register(app, tickets.Options{Runs: eng, QueueName: queue, Logger: logger}); err != nil {
		return err
	}
	return app.BindQueueName(queue, EnvTicketsQueue)
}

// ModelPicker picks the assistant's model from the app's settings, and names its vendor
// (assistantmodel.FromEnv).
type ModelPicker func(getenv func(string) string) (m model.Model, vendor string, err error)

// Launch is the example app's launch.Builder on the built-in assistant model: LaunchWith(nil).
func Launch(ctx context.Context, s launch.Settings) (*launch.App, error) {
	return LaunchWith(nil)(ctx, s)
}

// LaunchWith returns the example app's launch.Builder: it builds the app from the entrypoint's
// settings (the assistant on the model pick picks from them; nil, the built-in model), with the
// platform threads and echo_agent's checkpoints in the stores launch opened (Azure storage when
// AzureWebJobsStorage is configured, process memory otherwise), and the tickets queue
// <FUNCGRAPH_STORAGE_PREFIX>-tickets, created on Azure storage when missing.
func LaunchWith(pick ModelPicker) launch.Builder {
	return func(ctx context.Context, s launch.Settings) (*launch.App, error) {
		cfg := Config{
			Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock, Durable: s.Durable,
			PlatformThreads: s.Threads, Checkpointer: s.Checkpoints, TraceExporter: s.TraceExporter,
			Isolation: s.Isolation, MaxWait: s.MaxWait, MemoryBudget: s.MemoryBudget,
		}
		if s.Names.Prefix != "" {
			cfg.TicketsQueue = s.Names.Prefix + "-tickets"
		}
		if s.Azure != nil && cfg.TicketsQueue != "" {
			// Producers write to the queue before any listener ran: it must exist.
			if _, err := s.Azure.EnsureQueue(ctx, cfg.TicketsQueue); err != nil {
				return nil, fmt.Errorf("build example app: %w", err)
			}
		}
		if pick != nil && s.Getenv != nil {
			m, vendor, err := pick(s.Getenv)
			if err != nil {
				return nil, fmt.Errorf("build example app: %w", err)
			}
			cfg.Model = m
			if s.Logger != nil {
				s.Logger.Info("assistant model", "vendor", vendor)
			}
		}
		a, err := Build(cfg)
		if err != nil {
			return nil, err
		}
		return a.App(), nil
	}
}
