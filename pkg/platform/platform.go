package platform

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Options configures the platform routes. The zero value is valid.
type Options struct {
	// Threads stores thread records; nil means a new threads.NewBoundedMemory of
	// threads.DefaultMemoryMaxThreads (one instance only; each identity keeps at most a
	// quarter of them, and past either bound the least recently updated threads that are not
	// busy of the creator, or of the identity holding the most, are dropped:
	// threads.MemoryOptions). launch gives the embedded default's one, on its memory budget.
	Threads threads.Store
	// NewRunBackend builds the background-run backend from the executor the service
	// provides; nil means NewLocalRuns with default options.
	NewRunBackend func(exec RunExecutor) (RunBackend, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger is the surface's logger; nil means the app's logger.
	Logger *slog.Logger
	// StaleLockAge is how long a thread may stay busy before the timer-triggered sweep
	// (StaleLockFunction) moves it to error; 0 means DefaultStaleLockAge. Negative is invalid.
	StaleLockAge time.Duration
	// StaleLockSchedule is the sweep's NCRONTAB schedule; "" means DefaultStaleLockSchedule.
	StaleLockSchedule string
	// Durable serves durable graphs as assistants (see DurableAssistants); nil means none.
	Durable DurableAssistants
	// Isolation scopes threads and their runs to the identity that created them (see
	// package isolation and isolation.go), and the app's hosting routes to the same threads
	// (host.GraphHostApp.SetIsolation); nil means the app's host.Options.Isolation, and
	// off when that is nil too: every caller sees every thread.
	Isolation *isolation.Isolation
	// MemoryBudget is the byte budget of the in-memory stores the threads and runs are
	// written to; nil means the app's host.Options.MemoryBudget, and none when that is nil
	// too. With it the routes that create threads and runs (threads create, runs create,
	// wait and stream, with or without a thread) refuse 507 before reading a body the budget
	// cannot take (its declared length past the room left for new work,
	// membudget.Budget.Admits). The stores account and refuse the writes either way.
	MemoryBudget *membudget.Budget
	// ResponseBudget counts what the routes' answers hold while they are sent, per identity
	// and in total, and bounds their open event streams (respond.go); nil means the app's
	// host.Options.ResponseBudget, so that the hosting routes, these and the runs API share
	// one.
	ResponseBudget *respbudget.Budget
}

// ErrNotEnabled is returned by Mount for an app built without Options.PlatformCompat.
var ErrNotEnabled = errors.New("platform: the hosting app was built without PlatformCompat")

// Service serves the platform routes of one hosting app.
type Service struct {
	app       *host.GraphHostApp
	store     threads.Store
	runs      RunBackend
	now       func() time.Time
	started   time.Time
	logger    *slog.Logger
	prefix    string
	maxBody   int64
	maxDepth  int
	maxNodes  int
	maxStream int
	maxWait   time.Duration
	durable   DurableAssistants
	iso       *isolation.Isolation
	budget    *membudget.Budget
	responses *respbudget.Budget

	liveMu sync.Mutex
	live   map[string]*runLog // run id → the stream of a background run executing here; guarded by liveMu
}

// Mount registers the platform routes (functions fg_platform_<area>_<action>, app-level auth)
// and the timer-triggered stale-lock sweep (StaleLockFunction) on app's function app and
// returns the service. It fails with ErrNotEnabled when app was
// built without PlatformCompat, and with funchost.ErrRouteConflict when a route collides.
// Graphs registered on app later are served too. Close the service to stop background runs.
func Mount(app *host.GraphHostApp, opts Options) (*Service, error) {
	if !app.PlatformCompat() {
		return nil, ErrNotEnabled
	}
	if opts.StaleLockAge < 0 {
		return nil, errors.New("mount platform routes: stale lock age must not be negative")
	}
	if opts.StaleLockAge == 0 {
		opts.StaleLockAge = DefaultStaleLockAge
	}
	if opts.StaleLockSchedule == "" {
		opts.StaleLockSchedule = DefaultStaleLockSchedule
	}
	ho := app.Options()
	s := &Service{
		app: app, store: opts.Threads, now: opts.Now, logger: opts.Logger,
		maxBody: ho.MaxRequestBodyBytes, maxDepth: ho.MaxInputDepth, maxNodes: ho.MaxInputNodes,
		maxStream: ho.MaxStreamResponseBytes, maxWait: ho.MaxWait, durable: opts.Durable,
		iso: opts.Isolation, live: map[string]*runLog{}, budget: opts.MemoryBudget,
	}
	if s.iso == nil {
		s.iso = ho.Isolation
	}
	if s.budget == nil {
		s.budget = ho.MemoryBudget
	}
	s.responses = opts.ResponseBudget
	if s.responses == nil {
		s.responses = ho.ResponseBudget
	}
	if s.responses == nil { // an app not built by host.New
		s.responses = respbudget.New(respbudget.Limits{})
	}
	if s.store == nil {
		s.store = threads.NewBoundedMemory(threads.DefaultMemoryMaxThreads)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = app.Logger()
	}
	s.logger = s.logger.With("component", "platform")
	s.started = s.now().UTC()
	fa := app.FunctionApp()
	s.prefix = "/" + fa.RoutePrefix()
	if s.prefix == "/" {
		s.prefix = ""
	}
	newBackend := opts.NewRunBackend
	if newBackend == nil {
		newBackend = func(exec RunExecutor) (RunBackend, error) { return NewLocalRuns(exec, LocalRunsOptions{}), nil }
	}
	runs, err := newBackend(s)
	if err != nil {
		return nil, fmt.Errorf("mount platform routes: build run backend: %w", err)
	}
	s.runs = runs
	scratch := funchost.NewFunctionApp()
	scratch.SetRoutePrefix(fa.RoutePrefix())
	if err := scratch.Mount(fa); err != nil {
		return nil, fmt.Errorf("mount platform routes: %w", err)
	}
	fns := s.functions(ho.AuthLevel)
	for _, fn := range fns {
		if err := scratch.HandleHTTP(fn); err != nil {
			return nil, fmt.Errorf("mount platform routes: %w", err)
		}
	}
	for _, fn := range fns {
		if err := fa.HandleHTTP(fn); err != nil {
			return nil, fmt.Errorf("mount platform routes: %w", err)
		}
	}
	if err := fa.HandleTimer(s.sweepFunction(opts.StaleLockSchedule, opts.StaleLockAge)); err != nil {
		return nil, fmt.Errorf("mount platform routes: %w", err)
	}
	if s.iso != nil {
		app.SetIsolation(s.iso, hostingOwners{s})
	}
	return s, nil
}

// Close stops the background-run backend when it has a Close method.
func (s *Service) Close() error {
	if c, ok := s.runs.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Threads returns the thread store, for maintenance such as ResetStaleLocks.
func (s *Service) Threads() threads.Store { return s.store }

type route struct {
	name, method, path string
	h                  http.HandlerFunc
	summary            string
	answer             answerMode // how its answer counts in the response budget (respond.go)
}

// functions returns the platform routes. Those that create a thread or a run are new work
// for the memory budget (admitNew); every answer counts in the response budget (counted).
func (s *Service) functions(auth funchost.AuthLevel) []funchost.HTTPFunction {
	routes := []route{
		{"assistants_search", "POST", "assistants/search", s.serveAssistantsSearch, "Search assistants", readAnswer},
		{"assistants_count", "POST", "assistants/count", s.serveAssistantsCount, "Count assistants", readAnswer},
		{"assistants_get", "GET", "assistants/{assistant_id}", s.serveAssistantGet, "Get an assistant", readAnswer},
		{"threads_create", "POST", "threads", s.admitNew(s.serveThreadCreate), "Create a thread", writeAnswer},
		{"threads_get", "GET", "threads/{thread_id}", s.serveThreadGet, "Get a thread", readAnswer},
		{"threads_patch", "PATCH", "threads/{thread_id}", s.serveThreadPatch, "Update a thread's metadata", writeAnswer},
		{"threads_delete", "DELETE", "threads/{thread_id}", s.serveThreadDelete, "Delete a thread", freeAnswer},
		{"threads_search", "POST", "threads/search", s.serveThreadsSearch, "Search threads", readAnswer},
		{"threads_count", "POST", "threads/count", s.serveThreadsCount, "Count threads", readAnswer},
		{"threads_state_get", "GET", "threads/{thread_id}/state", s.serveStateGet, "Get a thread's state", readAnswer},
		{"threads_state_update", "POST", "threads/{thread_id}/state", s.serveStateUpdate, "Update a thread's state", writeAnswer},
		{"threads_state_checkpoint", "POST", "threads/{thread_id}/state/checkpoint", s.serveStateAtCheckpoint, "Get a thread's state at a checkpoint", readAnswer},
		{"threads_history", "POST", "threads/{thread_id}/history", s.serveHistory, "A thread's state history", readAnswer},
		{"runs_wait", "POST", "threads/{thread_id}/runs/wait", s.admitNew(s.serveThreadRunWait), "Run on a thread and wait", writeAnswer},
		{"runs_stream", "POST", "threads/{thread_id}/runs/stream", s.admitNew(s.serveThreadRunStream), "Run on a thread, SSE", writeAnswer},
		{"runs_create", "POST", "threads/{thread_id}/runs", s.admitNew(s.serveRunCreate), "Create a background run", writeAnswer},
		{"runs_list", "GET", "threads/{thread_id}/runs", s.serveRunList, "List a thread's runs", readAnswer},
		{"runs_get", "GET", "threads/{thread_id}/runs/{run_id}", s.serveRunGet, "Get a run", readAnswer},
		{"runs_join", "GET", "threads/{thread_id}/runs/{run_id}/join", s.serveRunJoin, "Wait for a run", joinAnswer},
		{"runs_join_stream", "GET", "threads/{thread_id}/runs/{run_id}/stream", s.serveRunStream, "Join a run's stream, SSE", joinAnswer},
		{"runs_cancel", "POST", "threads/{thread_id}/runs/{run_id}/cancel", s.serveRunCancel, "Cancel a run", freeAnswer},
		{"runs_stateless_wait", "POST", "runs/wait", s.admitNew(s.serveThreadlessWait), "Run without a thread and wait", writeAnswer},
		{"runs_stateless_stream", "POST", "runs/stream", s.admitNew(s.serveThreadlessStream), "Run without a thread, SSE", writeAnswer},
	}
	fns := make([]funchost.HTTPFunction, 0, len(routes))
	for _, r := range routes {
		fns = append(fns, funchost.HTTPFunction{
			Name: "fg_platform_" + r.name, Methods: []string{r.method}, Route: r.path, AuthLevel: auth, Handler: s.isolate(s.counted(r.h, r.answer)),
			Doc: funchost.RouteDoc{Summary: r.summary, Tags: []string{"platform"}},
		})
	}
	return fns
}

// graph returns the registered graph named name, or else the durable assistant.
func (s *Service) graph(name string) (host.InvocableGraph, bool) {
	if g, ok := s.app.Graph(name); ok {
		return g, true
	}
	return s.durableGraph(name)
}
