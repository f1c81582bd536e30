package host

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// GraphHostApp hosts graphs as HTTP functions. Build it with New, add graphs with Register at
// startup, then serve FunctionApp. Serving is safe for concurrent use; Register may run
// concurrently with serving (health details see the graph once it is registered).
type GraphHostApp struct {
	opts        Options
	lim         limits
	app         *funchost.FunctionApp
	lock        lock.ThreadLock
	lockBackend string
	observer    safeObserver
	logger      *slog.Logger
	scope       atomic.Pointer[threadScope] // per-user isolation; nil: off (isolation.go)

	mu         sync.RWMutex
	graphs     []*hostedGraph            // registration order; guarded by mu
	names      map[string]string         // lower-cased name → name, incl. reserved names; guarded by mu
	details    []healthDetail            // guarded by mu
	openapiExt []func(*openapi.Document) // AddOpenAPI extensions; guarded by mu
	streamType map[string]bool           // function names answering text/event-stream; guarded by mu
}

// New builds an app with the health, health details and OpenAPI routes. It fails for invalid
// options (ErrInvalidOptions) and, with the contract's message, when LockBackendSetting asks
// for a distributed lock while the in-process lock is in use (ErrLockBackendMismatch). With
// anonymous app-level auth it logs a warning every time.
func New(opts Options) (*GraphHostApp, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.ResponseBudget == nil {
		opts.ResponseBudget = respbudget.New(respbudget.Limits{})
	}
	a := &GraphHostApp{
		opts:        opts,
		lim:         limits{maxBody: opts.MaxRequestBodyBytes, maxDepth: opts.MaxInputDepth, maxNodes: opts.MaxInputNodes},
		app:         funchost.NewFunctionApp(),
		lock:        opts.ThreadLock,
		lockBackend: typeName(opts.ThreadLock),
		observer:    safeObserver{obs: opts.Observer, logger: opts.Logger},
		logger:      opts.Logger,
		names:       map[string]string{},
		streamType:  map[string]bool{},
	}
	if opts.Isolation != nil {
		a.SetIsolation(opts.Isolation, nil)
	}
	a.app.SetRoutePrefix(opts.RoutePrefix)
	a.app.AddComponent(a) // launch asks it for its thread lock (ThreadLock)
	if opts.AuthLevel == funchost.AuthAnonymous {
		a.logger.Warn("graph endpoints are publicly accessible without authentication; " +
			"use auth level function at app level or per graph")
	}
	if err := a.registerAppRoutes(); err != nil {
		return nil, err
	}
	return a, nil
}

// FunctionApp returns the function app with every route registered so far. Other surfaces
// (the durable engine, the platform routes) may add their functions to it.
func (a *GraphHostApp) FunctionApp() *funchost.FunctionApp { return a.app }

// ThreadLock returns the lock that serialises runs per (graph, thread) on this app
// (Options.ThreadLock, or the in-process lock New made).
func (a *GraphHostApp) ThreadLock() lock.ThreadLock { return a.lock }

// AuthLevel returns the app-level auth level of graph routes (Options.AuthLevel, default
// funchost.AuthFunction). Surfaces mounted on the app inherit it unless told otherwise.
func (a *GraphHostApp) AuthLevel() funchost.AuthLevel { return a.opts.AuthLevel }

// PlatformCompat reports whether the platform routes were asked for (Options.PlatformCompat).
func (a *GraphHostApp) PlatformCompat() bool { return a.opts.PlatformCompat }

// Logger returns the app's logger.
func (a *GraphHostApp) Logger() *slog.Logger { return a.logger }

func (a *GraphHostApp) registerAppRoutes() error {
	fns := []funchost.HTTPFunction{
		{
			Name: "fg_health", Methods: []string{http.MethodGet}, Route: "health", AuthLevel: a.opts.HealthAuthLevel,
			Handler: http.HandlerFunc(a.serveHealth),
			Doc: funchost.RouteDoc{Summary: "Health", Description: "Liveness probe; never lists graphs.",
				Tags: []string{"health"}, Response: openapi.Ref("HealthResponse")},
		},
		{
			Name: "fg_health_details", Methods: []string{http.MethodGet}, Route: "health/details", AuthLevel: a.opts.HealthDetailsAuthLevel,
			Handler: http.HandlerFunc(a.serveHealthDetails),
			Doc: funchost.RouteDoc{Summary: "Health details", Description: "Registered graphs: names, descriptions, checkpointer status.",
				Tags: []string{"health"}, Response: openapi.Ref("HealthDetailsResponse")},
		},
		{
			Name: "fg_openapi", Methods: []string{http.MethodGet}, Route: "openapi.json", AuthLevel: a.opts.AuthLevel,
			Handler: http.HandlerFunc(a.serveOpenAPI),
			Doc:     funchost.RouteDoc{Summary: "OpenAPI document", Tags: []string{"meta"}},
		},
	}
	for _, fn := range fns {
		if err := a.app.HandleHTTP(fn); err != nil {
			return fmt.Errorf("register %s: %w", fn.Name, err)
		}
	}
	return nil
}

// ReserveGraphName claims name in the app's one graph namespace, for surfaces that add graph
// routes of their own (the durable engine). It applies the same rules as Register: the graph
// name rule (ErrEmptyName, ErrInvalidName) and uniqueness ignoring case (ErrDuplicateName).
func (a *GraphHostApp) ReserveGraphName(name string) error {
	if err := ValidateGraphName(name); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.claimLocked(name)
}

func (a *GraphHostApp) claimLocked(name string) error {
	if _, taken := a.names[strings.ToLower(name)]; taken {
		return apierror.Newf(ErrDuplicateName, "Graph %s is already registered", pyRepr(name))
	}
	a.names[strings.ToLower(name)] = name
	return nil
}

func (a *GraphHostApp) releaseNameLocked(name string) { delete(a.names, strings.ToLower(name)) }

// AsyncGraphs returns the names of the graphs registered with AsyncMode, or of every graph when
// Options.AsyncRuns is set, in registration order. A durable engine attached to this app offers
// runs for them; without one the flags have no effect.
func (a *GraphHostApp) AsyncGraphs() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var names []string
	for _, g := range a.graphs {
		if a.opts.AsyncRuns || g.async {
			names = append(names, g.name)
		}
	}
	return names
}

// Graph returns the graph registered under name (exact match), for surfaces that run hosted
// graphs another way, such as the durable engine's async runs.
func (a *GraphHostApp) Graph(name string) (InvocableGraph, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, g := range a.graphs {
		if g.name == name {
			return g.graph, true
		}
	}
	return nil, false
}

// Graphs returns information about the registered graphs in registration order.
func (a *GraphHostApp) Graphs() []GraphInfo {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]GraphInfo, 0, len(a.graphs))
	for _, g := range a.graphs {
		out = append(out, g.info())
	}
	return out
}

// InvokeFunction returns the invoke route of the graph registered under name (exact match):
// its handler runs the graph with every check of POST graphs/<name>/invoke (body limits,
// the thread lock, isolation, MaxWait), for surfaces that offer hosted graphs through
// another protocol, such as an MCP tool call. The route's AuthLevel is the level a caller
// must have reached; the handler does not check keys itself.
func (a *GraphHostApp) InvokeFunction(name string) (funchost.HTTPFunction, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, g := range a.graphs {
		if g.name == name {
			return a.graphFunctions(g)[0], true
		}
	}
	return funchost.HTTPFunction{}, false
}
