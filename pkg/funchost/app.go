package funchost

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// AuthLevel is the authorization level of an HTTP function, as written in function.json.
type AuthLevel string

// Auth levels understood by the Functions host.
const (
	// AuthAnonymous needs no key.
	AuthAnonymous AuthLevel = "anonymous"
	// AuthFunction needs a function key, a host key or the master key.
	AuthFunction AuthLevel = "function"
	// AuthAdmin needs the master key.
	AuthAdmin AuthLevel = "admin"
)

// ParseAuthLevel parses an auth level case-insensitively.
func ParseAuthLevel(s string) (AuthLevel, error) {
	switch l := AuthLevel(strings.ToLower(strings.TrimSpace(s))); l {
	case AuthAnonymous, AuthFunction, AuthAdmin:
		return l, nil
	}
	return "", fmt.Errorf("parse auth level %q: want anonymous, function or admin", s)
}

// DefaultRoutePrefix is the host's default `extensions.http.routePrefix`.
const DefaultRoutePrefix = "api"

// HTTPFunction is an HTTP-triggered function: one route served by an ordinary http.Handler.
// Route parameters reach the handler through (*http.Request).PathValue; an unmatched optional
// parameter reads as "".
type HTTPFunction struct {
	// Name is the function name (folder name of its function.json).
	Name string
	// Methods lists the allowed methods; empty means all.
	Methods []string
	// Route is the route template without the route prefix; empty means the function name.
	Route string
	// AuthLevel is enforced by the host (and by the standalone server); empty means function.
	AuthLevel AuthLevel
	// Handler serves the request.
	Handler http.Handler
	// Doc carries optional API documentation for OpenAPI generators.
	Doc RouteDoc
}

// RouteDoc documents a route for API description documents. It never affects serving.
type RouteDoc struct {
	Summary     string
	Description string
	Tags        []string
	// Request and Response are JSON Schemas (any JSON-encodable value), or nil.
	Request  any
	Response any
	// RequestOptional documents the request body as optional (requestBody.required false).
	RequestOptional bool
	// Status is the success status documented for Response; 0 means 200.
	Status int
	// Errors documents the error statuses the route really answers, in order.
	Errors []RouteError
}

// RouteError documents one error status of a route.
type RouteError struct {
	Status      int
	Description string
	// Schema is the error body's JSON Schema, or nil.
	Schema any
}

// Outputs holds output binding values by binding name.
type Outputs map[string]any

// OutputBinding declares a non-HTTP output binding of a queue or timer function.
type OutputBinding struct {
	// Name is the binding name the handler uses as a key in Outputs.
	Name string
	// Type is the binding type, e.g. "queue".
	Type string
	// QueueName is the target queue of a queue output.
	QueueName string
	// Connection names the app setting with the storage connection; empty means
	// AzureWebJobsStorage.
	Connection string
	// DataType is the binding data type; "binary" turns off the host's base64 decoding.
	DataType string
}

// QueueHandler handles one queue message. A returned error fails the invocation, so the host
// retries the message and eventually moves it to the poison queue.
type QueueHandler func(ctx context.Context, msg QueueMessage) (Outputs, error)

// QueueFunction is a queue-triggered function.
type QueueFunction struct {
	Name       string
	QueueName  string
	Connection string
	Outputs    []OutputBinding
	Handler    QueueHandler
}

// TimerHandler handles one timer tick. A returned error fails the invocation.
type TimerHandler func(ctx context.Context, info TimerInfo) (Outputs, error)

// TimerFunction is a timer-triggered function.
type TimerFunction struct {
	Name string
	// Schedule is a 6-field NCRONTAB expression (seconds first).
	Schedule     string
	RunOnStartup bool
	UseMonitor   bool
	Outputs      []OutputBinding
	Handler      TimerHandler
}

// FunctionApp is the route table of a custom handler. The same table drives the custom-handler
// server (CustomHandler), the standalone server (Standalone) and function.json generation
// (WriteFunctions). Register everything at startup; a FunctionApp is then safe for concurrent
// serving.
type FunctionApp struct {
	mu          sync.Mutex
	routePrefix string
	names       map[string]string // lower-case name → name
	http        []*httpEntry
	queues      []QueueFunction
	timers      []TimerFunction
	middleware  []func(http.Handler) http.Handler
	// queueSettings maps a lower-case queue name to the app setting function.json reads it
	// from (BindQueueName).
	queueSettings map[string]queueSetting
	// components are the parts built on this function app (AddComponent).
	components []any
}

type httpEntry struct {
	fn       HTTPFunction
	template *RouteTemplate
	methods  []string // upper-case, sorted; empty = all
}

// NewFunctionApp returns an empty app with the default route prefix `api`.
func NewFunctionApp() *FunctionApp {
	return &FunctionApp{routePrefix: DefaultRoutePrefix, names: map[string]string{}}
}

// RoutePrefix returns the route prefix (host.json `extensions.http.routePrefix`).
func (a *FunctionApp) RoutePrefix() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.routePrefix
}

// SetRoutePrefix sets the route prefix; "" removes it. It must match host.json.
func (a *FunctionApp) SetRoutePrefix(prefix string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.routePrefix = strings.Trim(prefix, "/")
}

var functionNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,127}$`)

// ValidateFunctionName checks a function name against the host's rule.
func ValidateFunctionName(name string) error {
	if !functionNameRE.MatchString(name) || strings.EqualFold(name, "host") {
		return fmt.Errorf("%w: %q must match ^[a-z][a-z0-9_-]{0,127}$ (case-insensitive) and not be \"host\"", ErrInvalidFunction, name)
	}
	return nil
}

func (a *FunctionApp) claimName(name string) error {
	if err := ValidateFunctionName(name); err != nil {
		return err
	}
	if prev, ok := a.names[strings.ToLower(name)]; ok {
		return fmt.Errorf("%w: function %q is already registered (as %q)", ErrDuplicateFunction, name, prev)
	}
	a.names[strings.ToLower(name)] = name
	return nil
}

// HandleHTTP registers an HTTP function. It refuses invalid names, duplicate names, reserved
// route prefixes and routes that the host could not tell apart from an existing one (see
// CheckRouteConflict).
func (a *FunctionApp) HandleHTTP(fn HTTPFunction) error {
	if fn.Handler == nil {
		return fmt.Errorf("%w: function %q has no handler", ErrInvalidFunction, fn.Name)
	}
	if fn.AuthLevel == "" {
		fn.AuthLevel = AuthFunction
	}
	if _, err := ParseAuthLevel(string(fn.AuthLevel)); err != nil {
		return fmt.Errorf("%w: function %q: %v", ErrInvalidFunction, fn.Name, err)
	}
	if fn.Route == "" {
		fn.Route = fn.Name
	}
	e, err := newHTTPEntry(fn.Name, fn.Route, fn.Methods)
	if err != nil {
		return err
	}
	e.fn = fn
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, other := range a.http {
		if err := checkConflict(e, other); err != nil {
			return err
		}
	}
	if err := a.claimName(fn.Name); err != nil {
		return err
	}
	for _, mw := range a.middleware {
		e.fn.Handler = mw(e.fn.Handler)
	}
	a.http = append(a.http, e)
	return nil
}

func newHTTPEntry(name, route string, methods []string) (*httpEntry, error) {
	if err := ValidateFunctionName(name); err != nil {
		return nil, err
	}
	if IsReservedRoute(route) {
		return nil, fmt.Errorf("%w: function %q: the specified route conflicts with one or more built in routes", ErrRouteConflict, name)
	}
	t, err := ParseRouteTemplate(route)
	if err != nil {
		return nil, fmt.Errorf("%w: function %q: %v", ErrInvalidFunction, name, err)
	}
	e := &httpEntry{fn: HTTPFunction{Name: name, Route: route}, template: t}
	for _, m := range methods {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m != "" && !slices.Contains(e.methods, m) {
			e.methods = append(e.methods, m)
		}
	}
	sort.Strings(e.methods)
	return e, nil
}

// IsReservedRoute reports whether the host refuses a route because it starts with the built-in
// `admin` or `runtime` prefixes (a plain prefix test on the trimmed, lower-cased text).
func IsReservedRoute(route string) bool {
	r := strings.ToLower(strings.Trim(strings.TrimSpace(route), "/"))
	return strings.HasPrefix(r, "admin") || strings.HasPrefix(r, "runtime")
}

// HandleQueue registers a queue-triggered function.
func (a *FunctionApp) HandleQueue(fn QueueFunction) error {
	if fn.Handler == nil || fn.QueueName == "" {
		return fmt.Errorf("%w: queue function %q needs a handler and a queue name", ErrInvalidFunction, fn.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.claimName(fn.Name); err != nil {
		return err
	}
	a.queues = append(a.queues, fn)
	return nil
}

// HandleTimer registers a timer-triggered function.
func (a *FunctionApp) HandleTimer(fn TimerFunction) error {
	if fn.Handler == nil || len(strings.Fields(fn.Schedule)) != 6 {
		return fmt.Errorf("%w: timer function %q needs a handler and a 6-field NCRONTAB schedule", ErrInvalidFunction, fn.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.claimName(fn.Name); err != nil {
		return err
	}
	a.timers = append(a.timers, fn)
	return nil
}

// Mount adds every function of other to a, with the same checks as registering them one by one.
func (a *FunctionApp) Mount(other *FunctionApp) error {
	other.mu.Lock()
	https, queues, timers := slices.Clone(other.http), slices.Clone(other.queues), slices.Clone(other.timers)
	bound := make([]queueSetting, 0, len(other.queueSettings))
	for _, b := range other.queueSettings {
		bound = append(bound, b)
	}
	other.mu.Unlock()
	for _, b := range bound {
		if err := a.BindQueueName(b.queue, b.setting); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	for _, e := range https {
		if err := a.HandleHTTP(e.fn); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	for _, q := range queues {
		if err := a.HandleQueue(q); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	for _, t := range timers {
		if err := a.HandleTimer(t); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	return nil
}

// HTTPFunctions returns the HTTP functions in host order (function name, ordinal,
// case-insensitive).
func (a *FunctionApp) HTTPFunctions() []HTTPFunction {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]HTTPFunction, 0, len(a.http))
	for _, e := range sortedEntries(a.http) {
		out = append(out, e.fn)
	}
	return out
}

// QueueFunctions returns the queue functions in host order.
func (a *FunctionApp) QueueFunctions() []QueueFunction {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.queues)
	slices.SortFunc(out, func(x, y QueueFunction) int { return compareNames(x.Name, y.Name) })
	return out
}

// TimerFunctions returns the timer functions in host order.
func (a *FunctionApp) TimerFunctions() []TimerFunction {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.timers)
	slices.SortFunc(out, func(x, y TimerFunction) int { return compareNames(x.Name, y.Name) })
	return out
}

// compareNames orders function names as the host does: ordinal, case-insensitive.
func compareNames(x, y string) int {
	return strings.Compare(strings.ToUpper(x), strings.ToUpper(y))
}

func sortedEntries(es []*httpEntry) []*httpEntry {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(x, y *httpEntry) int { return compareNames(x.fn.Name, y.fn.Name) })
	return out
}

// Use wraps the handler of every HTTP function, registered now or later, with mw (the last Use
// is outermost). The same wrapped handler serves the custom-handler protocol, forwarded
// requests and the standalone server, so mw sees the caller's request as rebuilt from the
// invocation (headers such as traceparent included) in every mode. Call it at startup.
func (a *FunctionApp) Use(mw func(http.Handler) http.Handler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.middleware = append(a.middleware, mw)
	for _, e := range a.http {
		e.fn.Handler = mw(e.fn.Handler)
	}
}
