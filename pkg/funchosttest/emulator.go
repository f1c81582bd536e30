package funchosttest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// HostVersion is the version string the emulator announces in X-Azure-Functions-HostVersion
// and User-Agent (Azure-Functions-Host/<version>).
const HostVersion = "4.1040.300.25317"

// Host defaults the emulator applies.
const (
	// readinessInterval is how often the host polls `GET /` while the handler starts.
	readinessInterval = 25 * time.Millisecond
	// InitializationTimeout is how long the host waits for the handler to answer `GET /`.
	InitializationTimeout = 30 * time.Second
)

// AuthMode selects how the emulated host treats keys.
type AuthMode int

const (
	// AuthEnforced is Azure's behaviour: keys are checked, failures get 401 with an empty body,
	// and with no keys configured every non-anonymous function answers 401.
	AuthEnforced AuthMode = iota
	// AuthBypass is local `func start`: every request is treated as Admin.
	AuthBypass
)

// Options configures an Emulator. AppRoot is required: the emulator reads it as the host
// reads the folder `func start` runs in (host.json, local.settings.json, the function
// folders) and starts host.json's defaultExecutablePath, unless Handler is set.
type Options struct {
	// AppRoot is the folder with host.json and the function folders: a staged folder, the
	// truth for deploy tests.
	AppRoot string
	// Handler is served in-process on a loopback listener instead of starting host.json's
	// executable; the emulator still talks to it over real HTTP. It is for HTTP contract
	// tests of a funchost.FunctionApp (StartApp, Transports); a test of what a user deploys
	// runs the staged folder's executable instead.
	Handler http.Handler
	// HandlerServer configures the funchost.Server the in-process Handler is served on, as
	// the binary serves its custom handler (zero: its defaults, with a 5 s ShutdownTimeout).
	HandlerServer funchost.ServerConfig
	// Env is environment the test sets for the emulated `func start`, over the process's own
	// environment. As with Core Tools, a variable set (non-empty) in the environment wins over
	// the same name in local.settings.json's Values, which fill in the rest; together they
	// are the app settings: the handler's environment, the source of %NAME% in host.json's
	// arguments and in bindings, `disabled` settings, storage connections and
	// FUNCTIONS_REQUEST_BODY_SIZE_LIMIT.
	Env map[string]string
	// Keys are the host's secrets.
	Keys funchost.Keys
	// AuthMode selects enforced ("Azure") or bypassed ("func start") auth.
	AuthMode AuthMode
	// ForwardingOverride, if set, replaces host.json's enableForwardingHttpRequest.
	ForwardingOverride *bool
	// SingleEncodedStrings sends string trigger values JSON-encoded once, as the docs show,
	// instead of twice as the host really does.
	SingleEncodedStrings bool
	// QueuePollInterval, if positive, starts a background poller that delivers queue messages
	// at this interval. Tests usually call DrainQueues instead.
	QueuePollInterval time.Duration
	// ListenerVisibility, if positive, replaces the 10 minutes for which the storage queue
	// listener hides a received message (renewing it every half of that while the
	// invocation runs); whole seconds, at least 1 s. Tests set it short to see renewals.
	ListenerVisibility time.Duration
	// FunctionTimeout, if positive, replaces host.json's functionTimeout, e.g. to keep tests of
	// the timeout fast. The host accepts no value under 1 s.
	FunctionTimeout time.Duration
	// InitializationTimeout bounds the wait for the handler's first answer to `GET /`; 0 means
	// the host's 30 s.
	InitializationTimeout time.Duration
	// Logf receives the emulator's log lines (and the handler's Logs), e.g. t.Logf.
	Logf func(format string, args ...any)
}

// Emulator is a local Functions host: an HTTP front that routes and authorises requests like
// the host, turns them into invocations of a custom handler, and delivers queue messages and
// timer ticks.
type Emulator struct {
	opts   Options
	cfg    HostConfig
	folder *Folder
	// connections are the settings storage connections come from: Options.Env over
	// local.settings.json's Values, without the process environment.
	connections map[string]string
	functions   []*function // every loaded function, in name order
	routes      []*function // routable HTTP functions, in name order
	failed      map[string]error
	logf        func(string, ...any)

	client    *http.Client // JSON invocations: follows redirects
	forwarder *http.Client // forwarding: no redirects
	proxier   *http.Client // proxying: no redirects, no decompression, no overall timeout
	maxBody   int64

	front     *funchost.Server
	frontURL  string
	stopFront context.CancelFunc
	wmu       sync.Mutex // guards w and closed; held while the handler restarts
	w         *worker    // the running handler, nil after a failed restart
	closed    bool
	restarts  atomic.Int64
	renewals  atomic.Int64    // successful visibility renewals of storage queue messages
	bg        context.Context // ends with Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	queues  *queueService
	storage *storageQueues
}

// Start reads the app root, starts the handler, waits until it answers `GET /` and opens the
// HTTP front on a loopback port. Close it when done.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	if opts.AppRoot == "" {
		return nil, errors.New("start emulator: AppRoot is required")
	}
	e := &Emulator{opts: opts, logf: opts.Logf, queues: newQueueService(), storage: newStorageQueues()}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	folder, fns, routes, err := readFolder(opts.AppRoot, environ(opts.Env), e.logf)
	if err != nil {
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	cfg := folder.Config
	if opts.ForwardingOverride != nil {
		cfg.Forwarding = *opts.ForwardingOverride
	}
	if opts.FunctionTimeout > 0 {
		cfg.FunctionTimeout, cfg.FunctionTimeoutUnbounded = opts.FunctionTimeout, false
	}
	e.cfg, e.folder = cfg, folder
	e.connections = mergeSettings(opts.Env, folder.LocalSettings.Values)
	e.functions, e.failed, e.routes = fns, folder.FunctionErrors, routes
	for name, err := range e.failed {
		e.logf("funchosttest: function %s failed to load: %v", name, err)
	}
	e.maxBody = funchost.DefaultMaxRequestBodyBytes
	if v := e.setting("FUNCTIONS_REQUEST_BODY_SIZE_LIMIT"); v != "" {
		if _, err := fmt.Sscan(v, &e.maxBody); err != nil || e.maxBody <= 0 {
			return nil, fmt.Errorf("start emulator: FUNCTIONS_REQUEST_BODY_SIZE_LIMIT %q is not a positive integer", v)
		}
	}
	var timeout time.Duration
	if ft := cfg.EffectiveFunctionTimeout(); ft > 0 {
		timeout = ft + time.Minute
	}
	jar := http.DefaultTransport.(*http.Transport).Clone()
	e.client = &http.Client{Transport: jar, Timeout: timeout}
	e.forwarder = &http.Client{Transport: jar, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	e.proxier = proxyClient()

	e.bg, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := e.startHandler(ctx); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	if err := e.startFront(); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	bg := e.bg
	if err := e.startListeners(bg); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	if opts.QueuePollInterval > 0 {
		e.wg.Add(1)
		go e.pollQueues(bg, opts.QueuePollInterval)
	}
	return e, nil
}

// setting reads an app setting ("" when unset).
func (e *Emulator) setting(name string) string {
	v, _ := e.folder.Setting(name)
	return v
}

// environ is the environment of the emulated `func start`: the process's, with env over it.
func environ(env map[string]string) map[string]string {
	out := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			out[k] = v
		}
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}

func (e *Emulator) startFront() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen front: %w", err)
	}
	// Kestrel's manners at the edge: prompt answers to rejected `Expect: 100-continue`
	// requests, unread bodies drained so rejections are not lost to a reset, idle timeouts.
	front, err := funchost.NewServer(funchost.ServerConfig{ShutdownTimeout: 5 * time.Second}, http.HandlerFunc(e.serveFront),
		slog.New(slog.NewTextHandler(logfWriter(e.logf), &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("front: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.front, e.stopFront = front, cancel
	e.frontURL = "http://" + ln.Addr().String()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := front.Serve(ctx, ln); err != nil {
			e.logf("funchosttest: front: %v", err)
		}
	}()
	return nil
}

// logfWriter writes log lines through a Logf function.
type logfWriter func(string, ...any)

func (w logfWriter) Write(p []byte) (int, error) {
	w("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// URL returns the base URL of the emulated host's HTTP front (scheme://host:port, without the
// route prefix).
func (e *Emulator) URL() string { return e.frontURL }

// Config returns the host.json settings in effect (after ForwardingOverride).
func (e *Emulator) Config() HostConfig { return e.cfg }

// FunctionErrors returns the functions that failed to load, by folder name, with the host's
// reason. The other functions keep working.
func (e *Emulator) FunctionErrors() map[string]error {
	out := make(map[string]error, len(e.failed))
	for k, v := range e.failed {
		out[k] = v
	}
	return out
}

// Functions returns the names of the loaded functions in host order.
func (e *Emulator) Functions() []string {
	names := make([]string, 0, len(e.functions))
	for _, f := range e.functions {
		if _, bad := e.failed[f.Name]; !bad {
			names = append(names, f.Name)
		}
	}
	return names
}

// Close stops the front, the queue poller and the handler (process or in-process server). It
// is idempotent.
func (e *Emulator) Close() error {
	e.closeOnce.Do(func() {
		var errs []error
		if e.cancel != nil {
			e.cancel()
		}
		if e.stopFront != nil {
			e.stopFront() // the front's Serve shuts down and returns; wg waits for it
		}
		e.wg.Wait()
		if e.client != nil {
			// Before the handler's Shutdown: a connection dialled but never used counts as
			// active for 5 s and would hold Shutdown up.
			e.client.CloseIdleConnections()
		}
		if e.proxier != nil {
			e.proxier.CloseIdleConnections()
		}
		e.wmu.Lock()
		w := e.w
		e.w, e.closed = nil, true
		e.wmu.Unlock()
		if w != nil {
			if err := w.stop(); err != nil {
				errs = append(errs, err)
			}
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

func (e *Emulator) function(name string) (*function, bool) {
	for _, f := range e.functions {
		if strings.EqualFold(f.Name, name) {
			if _, bad := e.failed[f.Name]; bad {
				return nil, false
			}
			return f, true
		}
	}
	return nil, false
}
