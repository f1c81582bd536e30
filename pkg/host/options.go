package host

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Defaults of Options.
const (
	DefaultMaxStreamResponseBytes = 1048576
	DefaultMaxRequestBodyBytes    = 1048576
	DefaultMaxInputDepth          = 32
	DefaultMaxInputNodes          = 10000
	// DefaultMaxWait is the default of Options.MaxWait: well below the Azure front end's
	// 230 s cut (funchost.FrontEndTimeout) and host.json's functionTimeout.
	DefaultMaxWait = 200 * time.Second
)

// Options configures a GraphHostApp. The zero value is valid and means the defaults.
type Options struct {
	// AuthLevel is the app-level auth of graph routes (and platform routes); "" means
	// funchost.AuthFunction. Anonymous logs a warning at every New.
	AuthLevel funchost.AuthLevel
	// HealthAuthLevel is the auth of GET /api/health; "" means funchost.AuthAnonymous.
	HealthAuthLevel funchost.AuthLevel
	// HealthDetailsAuthLevel is the auth of GET /api/health/details; "" means AuthLevel.
	HealthDetailsAuthLevel funchost.AuthLevel
	// MaxStreamResponseBytes caps the buffered SSE data frames; 0 means 1048576.
	MaxStreamResponseBytes int
	// MaxRequestBodyBytes caps raw request bodies (a body of exactly the cap passes); 0
	// means 1048576.
	MaxRequestBodyBytes int64
	// MaxInputDepth caps the nesting of input and config; 0 means 32.
	MaxInputDepth int
	// MaxInputNodes caps the member values and items of input and config; 0 means 10000.
	MaxInputNodes int
	// MaxWait bounds how long a route holds its request waiting for a graph run: invoke and
	// stream here, and the platform routes that wait (runs/wait, runs/stream, join, cancel
	// with wait). Past it the route answers without the run's result and the run goes on,
	// detached from the request (docs/http-hosting.md, "Bounded waits"). 0 means
	// DefaultMaxWait; it must be below funchost.FrontEndTimeout.
	MaxWait time.Duration
	// PlatformCompat asks for the LangGraph-Platform-compatible routes. They are served by
	// the platform package when it is attached; this package only records the flag
	// (GraphHostApp.PlatformCompat).
	PlatformCompat bool
	// LiveStream sends every graph's stream route frame by frame, as the graph produces its
	// events, instead of the whole buffered stream once the run ends (the default, and
	// RegisterOptions.LiveStream for one graph). Served by funcgraph's own server, each frame is
	// flushed at once; under the Functions host the response reaches the client frame by frame
	// only where the host proxies HTTP (enableProxyingHttpRequest), else whole, as buffered.
	LiveStream bool
	// AsyncRuns offers durable runs for every graph. It takes effect when a durable engine is
	// attached (see GraphHostApp.AsyncGraphs); this package does not serve runs itself.
	AsyncRuns bool
	// ThreadLock serialises runs per (graph, thread); nil means a new
	// lock.InProcessThreadLock.
	ThreadLock lock.ThreadLock
	// Observer receives run lifecycle calls; nil means NopObserver.
	Observer RunObserver
	// RoutePrefix is the host route prefix (host.json extensions.http.routePrefix); "" means
	// "api". It must match host.json.
	RoutePrefix string
	// Logger is the app's logger; nil means slog.Default(). Request bodies and secrets are
	// never logged.
	Logger *slog.Logger
	// LockBackendSetting is the value of the GRAPH_LOCK_BACKEND setting, read from the
	// environment by the binary. When, trimmed and lower-cased, it is neither empty nor
	// "inprocess", New fails while the in-process lock is in use.
	LockBackendSetting string
	// Title and Version name the OpenAPI document; "" means "funcgraph" and "0.0.0".
	Title, Version string
	// Isolation scopes the invoke, stream and state routes to the caller's threads (see
	// package isolation and GraphHostApp.SetIsolation); nil means off. Until a ThreadOwners
	// is attached (platform.Mount does), a thread id from a caller without the master key
	// is refused.
	Isolation *isolation.Isolation
	// MemoryBudget is the byte budget of the in-memory stores the app's graphs and threads
	// write to (launch.Settings.MemoryBudget); nil means none. With it an invoke or stream of
	// a checkpointed graph the budget cannot take (its declared body past the room left for
	// new work, membudget.Budget.Admits) is refused 507 before its body is read; the
	// platform routes that create threads and runs do the same. The stores account and
	// refuse the writes either way.
	MemoryBudget *membudget.Budget
	// ResponseBudget counts what answers hold while they are sent, per identity and in total,
	// and bounds the event streams open (respond.go; docs/limits.md#response-budget); nil
	// means a budget of the app's own with the defaults. The platform routes and the runs API
	// mounted on the app share it unless given their own (launch.Settings.ResponseBudget gives
	// every surface of a server the same one).
	ResponseBudget *respbudget.Budget
}

// ErrInvalidOptions is wrapped by New for options that cannot work.
var ErrInvalidOptions = errors.New("host: invalid options")

// ErrLockBackendMismatch is wrapped by New when GRAPH_LOCK_BACKEND asks for a distributed lock
// but the in-process lock is in use.
var ErrLockBackendMismatch = errors.New("host: GRAPH_LOCK_BACKEND requires a distributed thread lock")

// withDefaults returns o with every unset field given its default.
func (o Options) withDefaults() Options {
	if o.AuthLevel == "" {
		o.AuthLevel = funchost.AuthFunction
	}
	if o.HealthAuthLevel == "" {
		o.HealthAuthLevel = funchost.AuthAnonymous
	}
	if o.HealthDetailsAuthLevel == "" {
		o.HealthDetailsAuthLevel = o.AuthLevel
	}
	if o.MaxStreamResponseBytes == 0 {
		o.MaxStreamResponseBytes = DefaultMaxStreamResponseBytes
	}
	if o.MaxRequestBodyBytes == 0 {
		o.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if o.MaxInputDepth == 0 {
		o.MaxInputDepth = DefaultMaxInputDepth
	}
	if o.MaxInputNodes == 0 {
		o.MaxInputNodes = DefaultMaxInputNodes
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.ThreadLock == nil {
		o.ThreadLock = lock.NewInProcessThreadLock()
	}
	if o.Observer == nil {
		o.Observer = NopObserver{}
	}
	if o.RoutePrefix == "" {
		o.RoutePrefix = funchost.DefaultRoutePrefix
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Title == "" {
		o.Title = "funcgraph"
	}
	if o.Version == "" {
		o.Version = "0.0.0"
	}
	return o
}

// Validate reports options that cannot work: unknown auth levels and negative limits. It
// applies the defaults first, so the zero Options is valid. (The contract does not range-check
// limits; zero means the default, and negative values are refused.)
func (o Options) Validate() error {
	o = o.withDefaults()
	for _, l := range []struct {
		name  string
		level funchost.AuthLevel
	}{{"AuthLevel", o.AuthLevel}, {"HealthAuthLevel", o.HealthAuthLevel}, {"HealthDetailsAuthLevel", o.HealthDetailsAuthLevel}} {
		if _, err := funchost.ParseAuthLevel(string(l.level)); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidOptions, l.name, err)
		}
	}
	switch {
	case o.MaxStreamResponseBytes < 0:
		return fmt.Errorf("%w: MaxStreamResponseBytes must not be negative", ErrInvalidOptions)
	case o.MaxRequestBodyBytes < 0:
		return fmt.Errorf("%w: MaxRequestBodyBytes must not be negative", ErrInvalidOptions)
	case o.MaxInputDepth < 0:
		return fmt.Errorf("%w: MaxInputDepth must not be negative", ErrInvalidOptions)
	case o.MaxInputNodes < 0:
		return fmt.Errorf("%w: MaxInputNodes must not be negative", ErrInvalidOptions)
	case o.MaxWait < 0 || o.MaxWait >= funchost.FrontEndTimeout:
		return fmt.Errorf("%w: MaxWait must be positive and below %gs (the Azure front end's cut); got %v",
			ErrInvalidOptions, funchost.FrontEndTimeout.Seconds(), o.MaxWait)
	}
	return checkLockBackend(o.LockBackendSetting, o.ThreadLock)
}

// checkLockBackend applies the GRAPH_LOCK_BACKEND rule.
func checkLockBackend(setting string, l lock.ThreadLock) error {
	v := strings.ToLower(strings.TrimSpace(setting))
	if v == "" || v == "inprocess" {
		return nil
	}
	if _, inProcess := l.(*lock.InProcessThreadLock); !inProcess {
		return nil
	}
	return apierror.Newf(ErrLockBackendMismatch,
		"GRAPH_LOCK_BACKEND=%s requires a distributed thread_lock backend (for example BlobLeaseThreadLock), "+
			"but the app is still using the default InProcessThreadLock. Pass thread_lock explicitly or unset "+
			"GRAPH_LOCK_BACKEND for local dev.", pyRepr(v))
}

// limits are the request limits of the parser.
type limits struct {
	maxBody            int64
	maxDepth, maxNodes int
}
