package runsapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// Defaults of Options.
const (
	// DefaultAPIVersion is the info.version of openapi.json when Options.Version is empty.
	DefaultAPIVersion = "0.1.0"
	// DefaultMaxRequestBodyBytes caps request bodies when Options.MaxRequestBodyBytes is 0.
	DefaultMaxRequestBodyBytes = 1 << 20
	// DefaultMaxInputDepth caps the nesting of a start's input and metadata and of an event
	// payload when Options.MaxInputDepth is 0: the hosting routes' default.
	DefaultMaxInputDepth = host.DefaultMaxInputDepth
)

// Function names of the run routes: the four of the contract (with health and openapi.json,
// which are openapi_document and health), then funcgraph's additions (listing, history,
// purge).
const (
	FuncStartGraphRun = "start_graph_run"
	FuncGetRunStatus  = "get_run_status"
	FuncSendRunEvent  = "send_run_event"
	FuncCancelRun     = "cancel_run"
	FuncListRuns      = "list_runs"
	FuncGetRunHistory = "get_run_history"
	FuncPurgeRun      = "purge_run"
	// FuncGetRunFeed is served when Options.Runs is an engine.RunFeeder, as the engine is.
	FuncGetRunFeed = "get_run_feed"
)

// Function names of the other routes; funcListGraphVersions is served only when
// Options.Runs is an engine.VersionCounter.
const (
	funcOpenAPIDocument   = "openapi_document"
	funcHealth            = "health"
	funcListGraphVersions = "list_graph_versions"
)

// ErrInvalidServiceOptions is wrapped by NewService for options that cannot work.
var ErrInvalidServiceOptions = errors.New("durable: invalid service options")

// Options configures a Service. Runs and Registry are required; every other zero field means
// its default.
type Options struct {
	// Runs executes and stores runs (the engine).
	Runs engine.Runs
	// Registry holds the graphs runs are started from; health and openapi.json list them.
	Registry *durable.Registry
	// AuthLevel is the auth level of every endpoint. "" means: the hosting app's auth level
	// when the service is mounted (Mount; funchost.AuthFunction unless the app
	// says otherwise), and funchost.AuthAnonymous for the service's own FunctionApp (parity:
	// docs/lineage.md). An explicit anonymous level logs a warning at NewService; an inherited or
	// defaulted one where it takes effect (Mount, FunctionApp), so every
	// anonymous run surface is announced once per construction, like the hosting app's.
	AuthLevel funchost.AuthLevel
	// Logger receives request failures (never bodies or keys); nil means slog.Default().
	Logger *slog.Logger
	// RoutePrefix is the host route prefix used in the URLs the API returns; "" means "api".
	// It must match host.json.
	RoutePrefix string
	// MaxRequestBodyBytes caps request bodies (413 above it); 0 means
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MaxInputDepth caps the nesting of a start's input and metadata and of an event payload
	// (400 deeper, nothing stored), a top-level container being depth 1; 0 means
	// DefaultMaxInputDepth.
	MaxInputDepth int
	// Version is info.version of openapi.json; "" means DefaultAPIVersion.
	Version string
	// Isolation scopes runs to the identity that started them (see package isolation and
	// isolation.go); nil means off: every caller sees every run. Health and openapi.json
	// are not scoped.
	Isolation *isolation.Isolation
	// MaxWait bounds how long GET /api/runs/{instance_id}/feed holds a request waiting for
	// the run to move (its wait parameter, and its event stream under the Functions host,
	// feed.go). 0 means: the hosting app's MaxWait when mounted (Mount), else
	// host.DefaultMaxWait. It must be below funchost.FrontEndTimeout.
	MaxWait time.Duration
	// MemoryBudget is the byte budget of the in-memory stores Runs writes to
	// (launch.Settings.MemoryBudget); nil means none. With it a start the budget cannot take
	// (its declared body past the room left for new work, membudget.Budget.Admits) is
	// refused 507 before its body is read; the stores account and refuse the writes either
	// way.
	MemoryBudget *membudget.Budget
	// ResponseBudget bounds what the read routes' answers (status, listing, history, feed)
	// hold while they are sent, and the feed's open event streams, per identity and in total
	// (429 past a bound, holds.go); nil means a budget of the service's own with the defaults.
	ResponseBudget *respbudget.Budget
}

// Validate reports options that cannot work (ErrInvalidServiceOptions).
func (o Options) Validate() error {
	switch {
	case o.Runs == nil:
		return fmt.Errorf("%w: Runs is required", ErrInvalidServiceOptions)
	case o.Registry == nil:
		return fmt.Errorf("%w: Registry is required", ErrInvalidServiceOptions)
	case o.MaxRequestBodyBytes < 0:
		return fmt.Errorf("%w: MaxRequestBodyBytes must not be negative", ErrInvalidServiceOptions)
	case o.MaxInputDepth < 0:
		return fmt.Errorf("%w: MaxInputDepth must not be negative", ErrInvalidServiceOptions)
	case o.MaxWait < 0 || o.MaxWait >= funchost.FrontEndTimeout:
		return fmt.Errorf("%w: MaxWait must be within 0..%s", ErrInvalidServiceOptions, funchost.FrontEndTimeout)
	}
	if o.AuthLevel != "" {
		if _, err := funchost.ParseAuthLevel(string(o.AuthLevel)); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidServiceOptions, err)
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RoutePrefix == "" {
		o.RoutePrefix = funchost.DefaultRoutePrefix
	}
	if o.MaxRequestBodyBytes == 0 {
		o.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if o.MaxInputDepth == 0 {
		o.MaxInputDepth = DefaultMaxInputDepth
	}
	if o.Version == "" {
		o.Version = DefaultAPIVersion
	}
	return o
}

// Service is the durable runs HTTP API on top of a Runs
// implementation. It holds no state of its own and is safe for concurrent use. Bodies are JSON
// in Python json.dumps style; every error body has an "error" string; internal errors are
// answered 500 {"error": "internal error"} and logged, never returned.
//
//	POST   /api/graphs/{graph_name}/runs              start_graph_run   202 | 400 | 404 | 409 | 413 | 503
//	GET    /api/runs/{instance_id}                    get_run_status    200 | 404
//	POST   /api/runs/{instance_id}/events/{event}     send_run_event    202 | 400 | 404 | 409 | 413 | 503
//	POST   /api/runs/{instance_id}/cancel             cancel_run        202 | 400 | 404 | 409 | 413 | 503
//	GET    /api/openapi.json                          openapi_document  200
//	GET    /api/health                                health            200
//	GET    /api/runs                                  list_runs         200 | 400
//	GET    /api/runs/{instance_id}/history            get_run_history   200 | 400 | 404
//	GET    /api/runs/{instance_id}/feed               get_run_feed      200 | 400 | 404
//	GET    /api/runs/{instance_id}/state              get_run_state     200 | 404
//	DELETE /api/runs/{instance_id}                    purge_run         200 | 404 | 409
//	GET    /api/graphs/{graph_name}/versions          list_graph_versions 200 | 404
//	GET    /api/graphs                                list_graphs       200
//	GET    /api/graphs/{graph_name}/manifest          get_graph_manifest 200 | 400 | 404
//
// The first six are the contract's, to the letter. The additions:
//
//   - GET /api/runs filters with the query parameters graph_name, graph_hash (16 lowercase
//     hex digits: the runs pinned to one version), status (one of the five
//     statuses, case-sensitive), created_after and created_before (RFC 3339, after < before,
//     within engine.MinCreatedFilter..MaxCreatedFilter: 1970 to 2262)
//     and pages with limit (1–1000, default 100) and continuation_token (opaque, from the
//     previous page, signed with a key every instance shares: token.go). Under isolation a
//     caller other than the master key lists their own runs only. 200 {"runs":
//     [{"instance_id", "runtime_status", "graph_name", "graph_version", "graph_hash",
//     "created_at", "last_updated_at"}...], "continuation_token": <string or null>}; a bad
//     parameter is 400 {"error": "invalid query parameter '<name>': <what is expected>"} and
//     lists nothing.
//
//   - GET /api/runs/{id}/history pages (limit, continuation_token) through the append-only
//     history, oldest first: 200 {"instance_id", "events": [{"sequence", "type", "name",
//     "node", "timestamp", "data"}...], "continuation_token"}; 404 for an unknown run. A run
//     that continued as new (durable.ContinueAsNew) answers its current generation;
//     generation=<n> reads the one before it (engine.GenerationHistorian), 404 naming the
//     generations kept for an older one (generation.go).
//
//   - GET /api/runs/{id}/feed?after=<seq>&run=<run>&wait=<seconds> (when Runs is an engine.RunFeeder,
//     as the engine is) reads the history after a position and waits for the run to move:
//     200 {"instance_id", "runtime_status", "run", "items": [{"seq", "type", "name", "node",
//     "timestamp", "data"}...], "next_after"}, or the same items as Server-Sent Events for
//     Accept: text/event-stream (feed.go).
//
//   - DELETE /api/runs/{id} purges a finished run and its history, and its child runs first:
//     200 {"instance_id": "<id>", "purged": true}; 404 {"error": "instance not found"}; 409
//     {"error": "instance is still active", "instance_id", "runtime_status"} for a run that is
//     not finished, 409 {"error": "instance is awaited by its parent run", "instance_id",
//     "runtime_status", "parent_instance_id"} for a child run whose parent has not read it yet.
//
//   - What a Running run waits for ends its status, each member only while it applies:
//     "sleeping_until" (a durable sleep's end), "node_retry" {"attempt", "retry_at"} (its node's
//     next attempt after a failed one) and "branches_retrying" [{"index", "attempt",
//     "retry_at"}] (an open fan-out's branches backing off, read with engine.RunDetailer when
//     Runs has it: one query per status read of a run with an open fan-out).
//
//   - A run that continued as new has "generation" (how often) last in its status; absent
//     for generation 0.
//
//   - Child runs (durable.StartChild): the status of a run started as a child has
//     "parent_instance_id" after "output", that of a run that started children
//     "child_instance_ids" (at most engine.MaxListedChildren, oldest first); neither member is
//     written otherwise. A child's id starts with engine.ChildRunPrefix, which a start may not
//     use: 400 {"error": "invalid instance_id: ids starting with 'child~' are reserved for
//     child runs"}.
//
//   - GET /api/graphs/{graph_name}/versions (when Runs is an engine.VersionCounter, as the
//     engine is): 200 {"graph_name", "versions": [{"graph_hash", "graph_version",
//     "registered", "latest", "unfinished_runs"}...]}, the registered versions first (the
//     latest first), then any other version with unfinished runs; 404 {"error": "unknown
//     graph '<name>'"} when there is none. An old version can leave the deployment once its
//     unfinished_runs is 0 (the count comes from the run index and errs high, never low;
//     listing the version's runs with status=Running and status=Pending repairs it).
//     Under isolation (Options.Isolation) it is the master key's only: 403 for another
//     caller (isolation.go).
//
//   - GET /api/graphs lists the durable graphs (the fragments health lists): 200
//     {"graphs": [{"graph_name", "version", "graph_hash", "entrypoint", "state_model_name",
//     "nodes", "events"}...]}. GET /api/graphs/{graph_name}/manifest[?graph_hash=<hash>]
//     returns a registered version's manifest (the latest without graph_hash): 200
//     {"graph_name", "latest", "manifest", "events": [{"event_name", "typed",
//     "payload_schema"}...]}, payload_schema the JSON Schema of a typed handler's payload
//     (durable.OnEvent), null for an untyped one; 404 {"error": "unknown graph '<name>'"} or
//     {"error": "unknown version '<hash>' of graph '<name>'"}; 400 for a malformed graph_hash.
//
// Names (product rule): an event name is 1–256 characters (UTF-16 code units) without
// control characters; another one is answered 400 {"error": "invalid event_name: want 1 to
// 256 characters without control characters"} before anything is read or stored (see
// engine.ValidEventName). The graph_name filter of GET /api/runs follows the graph name rule
// (engine.ValidGraphName).
//
// Bodies above Options.MaxRequestBodyBytes are refused with 413
// {"error": "request body too large"} (a funcgraph guard: docs/lineage.md). A start, event or
// cancel that lost to other writers on the same run too often (engine.ErrConflict) wrote
// nothing and is answered 503 {"error": "instance is busy, retry later"} with Retry-After
// (RetryAfterBusy), never 500. So is an event that this instance cannot check because it
// lacks the run's graph version (a rolling deploy): 503 with Retry-After, nothing stored.
//
// Graphs registered with durable.Registry.RegisterInternal (the platform's background runs)
// are not the client's: starting one is a 404 as for an unknown graph; status, events, cancel,
// history and purge of one of their runs are a 404 as for an unknown run; listings, health and
// openapi.json leave them out (a page of GET /api/runs may then hold fewer runs than its limit,
// even none, and still carry a continuation token); and a start may not take the id of one of
// their runs (409 instance already exists).
type Service struct {
	opts   Options
	runs   engine.Runs
	reg    *durable.Registry
	logger *slog.Logger
	// localTokenKey signs continuation tokens when Runs keeps no shared keys (token.go).
	localTokenKey []byte
	// maxWait is Options.MaxWait, or the bound Mount inherits (set before serving).
	maxWait time.Duration
	// responses is Options.ResponseBudget, or the service's own.
	responses *respbudget.Budget
}

// NewService validates opts and returns the service. With anonymous auth it logs a warning.
func NewService(opts Options) (*Service, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Service{opts: opts, runs: opts.Runs, reg: opts.Registry, logger: opts.Logger.With("component", "durable_api"), localTokenKey: newLocalTokenKey(),
		maxWait: opts.MaxWait, responses: opts.ResponseBudget}
	if s.responses == nil {
		s.responses = respbudget.New(respbudget.Limits{})
	}
	if s.maxWait == 0 {
		s.maxWait = host.DefaultMaxWait
	}
	s.warnIfAnonymous(opts.AuthLevel)
	return s, nil
}

// AnonymousWarning is the warning logged when the run endpoints end up without
// authentication; the hosting app logs its counterpart for graph endpoints.
const AnonymousWarning = "durable run endpoints are publicly accessible without authentication; " +
	"use auth level function at app level"

func (s *Service) warnIfAnonymous(level funchost.AuthLevel) {
	if level == funchost.AuthAnonymous {
		s.logger.Warn(AnonymousWarning)
	}
}

// authLevel returns the effective auth level of the run endpoints: the explicit
// Options.AuthLevel, else inherited.
func (s *Service) authLevel(inherited funchost.AuthLevel) funchost.AuthLevel {
	if s.opts.AuthLevel != "" {
		return s.opts.AuthLevel
	}
	return inherited
}

// FunctionApp returns a new function app serving the whole surface, health and openapi.json
// included, under the configured route prefix. Each call builds a fresh app.
func (s *Service) FunctionApp() (*funchost.FunctionApp, error) {
	app := funchost.NewFunctionApp()
	app.SetRoutePrefix(s.opts.RoutePrefix)
	auth := s.authLevel(funchost.AuthAnonymous)
	if s.opts.AuthLevel == "" {
		s.warnIfAnonymous(auth)
	}
	fns := append(s.runFunctions(auth), s.metaFunctions(auth)...)
	for _, fn := range fns {
		if err := app.HandleHTTP(fn); err != nil {
			return nil, fmt.Errorf("register %s: %w", fn.Name, err)
		}
	}
	return app, nil
}

// runFunctions are the run endpoints: everything but health and openapi.json.
func (s *Service) runFunctions(auth funchost.AuthLevel) []funchost.HTTPFunction {
	get, post, del := []string{http.MethodGet}, []string{http.MethodPost}, []string{http.MethodDelete}
	fns := []funchost.HTTPFunction{
		{Name: FuncStartGraphRun, Methods: post, Route: "graphs/{graph_name}/runs", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.startRun)), Doc: funchost.RouteDoc{Summary: "Start a graph run", Tags: []string{"runs"}, Request: openapi.Ref("StartRunRequest"), Response: openapi.Ref("ManagementPayload"),
				Status: http.StatusAccepted, Errors: routeErrors(400, 404, 409, 413, 503)}},
		{Name: FuncGetRunStatus, Methods: get, Route: "runs/{instance_id}", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.getStatus)), Doc: funchost.RouteDoc{Summary: "Get run status", Tags: []string{"runs"}, Response: openapi.Ref("RunStatus"), Errors: routeErrors(404)}},
		{Name: FuncSendRunEvent, Methods: post, Route: "runs/{instance_id}/events/{event_name}", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.sendEvent)), Doc: funchost.RouteDoc{Summary: "Raise an external event", Tags: []string{"runs"}, Response: openapi.Ref("EventAccepted"),
				Description: "The body is the event payload: any JSON value, empty for null. A client that may retry sends an Idempotency-Key header; a retried POST with the same key stores the event once.",
				Status:      http.StatusAccepted, Errors: routeErrors(400, 404, 409, 413, 503)}},
		{Name: FuncCancelRun, Methods: post, Route: "runs/{instance_id}/cancel", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.cancelRun)), Doc: funchost.RouteDoc{Summary: "Terminate a run", Tags: []string{"runs"}, Request: openapi.Ref("CancelRequest"), RequestOptional: true, Response: openapi.Ref("CancelAccepted"),
				Status: http.StatusAccepted, Errors: routeErrors(400, 404, 409, 413, 503)}},
		{Name: FuncListRuns, Methods: get, Route: "runs", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.listRuns)), Doc: funchost.RouteDoc{Summary: "List runs", Description: "Filters: graph_name, graph_hash, runtime_status (or status), created_after, created_before (RFC 3339), key.<name> (a search key's value: read from that key's index partition only); paging: limit (1-1000, default 100), continuation_token.", Tags: []string{"runs"}, Response: openapi.Ref("RunList"), Errors: routeErrors(400)}},
		{Name: FuncGetRunHistory, Methods: get, Route: "runs/{instance_id}/history", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.getHistory)), Doc: funchost.RouteDoc{Summary: "Get run history", Description: "Paging: limit (1-1000, default 100), continuation_token. The run's current generation; generation=<n> reads the one before it (a run that continued as new).", Tags: []string{"runs"}, Response: openapi.Ref("RunHistory"), Errors: routeErrors(400, 404)}},
		{Name: FuncPurgeRun, Methods: del, Route: "runs/{instance_id}", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.purgeRun)), Doc: funchost.RouteDoc{Summary: "Purge a finished run", Tags: []string{"runs"}, Response: openapi.Ref("RunPurged"), Errors: routeErrors(404, 409)}},
	}
	fns = append(fns, s.manifestFunctions(auth)...)
	fns = append(fns, s.rewindFunctions(auth)...) // rewind.go
	if _, ok := s.runs.(engine.RunFeeder); ok {
		fns = append(fns, s.feedFunction(auth))
	}
	if _, ok := s.runs.(engine.RunStateReader); ok {
		fns = append(fns, s.stateFunction(auth))
	}
	if _, ok := s.runs.(engine.VersionCounter); ok {
		fns = append(fns, funchost.HTTPFunction{Name: funcListGraphVersions, Methods: get, Route: "graphs/{graph_name}/versions", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.listVersions)), Doc: funchost.RouteDoc{Summary: "List a graph's versions and their unfinished runs", Tags: []string{"runs"},
				Description: "Every registered version (the latest first) and every version that still has unfinished runs, with their count: an old version can leave the deployment when its count is 0.",
				Response:    openapi.Ref("GraphVersions"), Errors: routeErrors(404)}})
	}
	return fns
}

// metaFunctions are health and openapi.json, which the hosting app replaces when both
// surfaces share one function app.
func (s *Service) metaFunctions(auth funchost.AuthLevel) []funchost.HTTPFunction {
	get := []string{http.MethodGet}
	return []funchost.HTTPFunction{
		{Name: funcOpenAPIDocument, Methods: get, Route: "openapi.json", AuthLevel: auth,
			Handler: s.handle(s.openAPI), Doc: funchost.RouteDoc{Summary: "OpenAPI document", Tags: []string{"meta"}}},
		{Name: funcHealth, Methods: get, Route: "health", AuthLevel: auth,
			Handler: s.handle(s.health), Doc: funchost.RouteDoc{Summary: "Health", Tags: []string{"meta"}, Response: openapi.Ref("DurableHealthResponse")}},
	}
}
