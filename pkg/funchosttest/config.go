package funchosttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// HostConfig is what the emulator reads from host.json.
type HostConfig struct {
	// ExecutablePath is customHandler.description.defaultExecutablePath (or the legacy
	// httpWorker section's).
	ExecutablePath string
	// Arguments are the description's arguments, before %VAR% expansion.
	Arguments []string
	// WorkingDirectory is the description's workingDirectory ("" = app root).
	WorkingDirectory string
	// Forwarding is enableForwardingHttpRequest (always on for the legacy httpWorker section).
	Forwarding bool
	// Legacy reports the legacy httpWorker section: http-in/http-out functions are forwarded,
	// but to `/{FunctionName}` rather than the original path.
	Legacy bool
	// Proxying is enableProxyingHttpRequest; it wins over forwarding.
	Proxying bool
	// RoutePrefix is extensions.http.routePrefix (default "api", "" allowed).
	RoutePrefix string
	// FunctionTimeout is functionTimeout as written; 0 when unset or "-1". The timeout in
	// effect is EffectiveFunctionTimeout.
	FunctionTimeout time.Duration
	// FunctionTimeoutUnbounded is set by functionTimeout "-1": no limit (allowed outside the
	// Consumption plan).
	FunctionTimeoutUnbounded bool
	// MessageEncoding is extensions.queues.messageEncoding: "base64" (default) or "none".
	MessageEncoding string
	// MaxDequeueCount is extensions.queues.maxDequeueCount (default 5).
	MaxDequeueCount int
	// Queues holds the other extensions.queues listener settings.
	Queues QueueSettings
}

// DefaultFunctionTimeout is the host's functionTimeout when host.json sets none outside the
// Consumption plan (ScriptJobHostOptionsSetup: 30 min; Consumption uses 5 min).
const DefaultFunctionTimeout = 30 * time.Minute

// minFunctionTimeout is the smallest functionTimeout the host accepts.
const minFunctionTimeout = time.Second

// EffectiveFunctionTimeout is the per-invocation limit the host applies: functionTimeout,
// DefaultFunctionTimeout when unset, 0 (none) for "-1".
func (c HostConfig) EffectiveFunctionTimeout() time.Duration {
	switch {
	case c.FunctionTimeoutUnbounded:
		return 0
	case c.FunctionTimeout == 0:
		return DefaultFunctionTimeout
	}
	return c.FunctionTimeout
}

type hostJSON struct {
	CustomHandler *handlerSection `json:"customHandler"`
	HTTPWorker    *handlerSection `json:"httpWorker"`
	Extensions    struct {
		HTTP *struct {
			RoutePrefix *string `json:"routePrefix"`
		} `json:"http"`
		Queues *struct {
			MessageEncoding    string `json:"messageEncoding"`
			MaxDequeueCount    int    `json:"maxDequeueCount"`
			BatchSize          *int   `json:"batchSize"`
			NewBatchThreshold  *int   `json:"newBatchThreshold"`
			VisibilityTimeout  string `json:"visibilityTimeout"`
			MaxPollingInterval string `json:"maxPollingInterval"`
		} `json:"queues"`
	} `json:"extensions"`
	FunctionTimeout string `json:"functionTimeout"`
}

type handlerSection struct {
	Description *struct {
		DefaultExecutablePath string   `json:"defaultExecutablePath"`
		WorkingDirectory      string   `json:"workingDirectory"`
		Arguments             []string `json:"arguments"`
	} `json:"description"`
	EnableForwardingHTTPRequest configBool `json:"enableForwardingHttpRequest"`
	EnableProxyingHTTPRequest   configBool `json:"enableProxyingHttpRequest"`
}

// loadHostConfig reads `<appRoot>/host.json`. Property names are matched case-insensitively,
// as the host does.
func loadHostConfig(appRoot string) (HostConfig, error) {
	data, err := os.ReadFile(filepath.Join(appRoot, "host.json"))
	if err != nil {
		return HostConfig{}, fmt.Errorf("load host.json: %w", err)
	}
	return ParseHostConfig(data)
}

// ParseHostConfig parses host.json content.
func ParseHostConfig(data []byte) (HostConfig, error) {
	var h hostJSON
	if err := json.Unmarshal(data, &h); err != nil {
		return HostConfig{}, fmt.Errorf("parse host.json: %w", err)
	}
	cfg := HostConfig{RoutePrefix: funchost.DefaultRoutePrefix, MessageEncoding: "base64", MaxDequeueCount: 5}
	section := h.CustomHandler
	if section == nil && h.HTTPWorker != nil {
		section = h.HTTPWorker
		cfg.Forwarding, cfg.Legacy = true, true // the legacy section forwards http-in/http-out functions
	}
	if section != nil {
		cfg.Forwarding = cfg.Forwarding || bool(section.EnableForwardingHTTPRequest)
		cfg.Proxying = bool(section.EnableProxyingHTTPRequest)
		if d := section.Description; d != nil {
			cfg.ExecutablePath, cfg.WorkingDirectory, cfg.Arguments = d.DefaultExecutablePath, d.WorkingDirectory, d.Arguments
		}
	}
	if hp := h.Extensions.HTTP; hp != nil && hp.RoutePrefix != nil {
		cfg.RoutePrefix = strings.Trim(*hp.RoutePrefix, "/")
	}
	if q := h.Extensions.Queues; q != nil {
		if q.MessageEncoding != "" {
			cfg.MessageEncoding = strings.ToLower(q.MessageEncoding)
		}
		if q.MaxDequeueCount > 0 {
			cfg.MaxDequeueCount = q.MaxDequeueCount
		}
		if err := parseQueueSettings(&cfg.Queues, q.BatchSize, q.NewBatchThreshold, q.VisibilityTimeout, q.MaxPollingInterval); err != nil {
			return HostConfig{}, fmt.Errorf("parse host.json: %w", err)
		}
	}
	if cfg.MessageEncoding != "base64" && cfg.MessageEncoding != "none" {
		return HostConfig{}, fmt.Errorf("parse host.json: messageEncoding %q: want base64 or none", cfg.MessageEncoding)
	}
	if h.FunctionTimeout != "" {
		d, err := parseTimeSpan(h.FunctionTimeout)
		if err != nil {
			return HostConfig{}, fmt.Errorf("parse host.json: functionTimeout: %w", err)
		}
		if strings.TrimSpace(h.FunctionTimeout) == "-1" {
			cfg.FunctionTimeoutUnbounded = true
		} else if d < minFunctionTimeout {
			return HostConfig{}, fmt.Errorf("parse host.json: FunctionTimeout must be greater than 00:00:01, got %q", h.FunctionTimeout)
		}
		cfg.FunctionTimeout = d
	}
	return cfg, nil
}

var timeSpanRE = regexp.MustCompile(`^(?:(\d+)\.)?(\d+):(\d+):(\d+)(?:\.(\d+))?$`)

// parseTimeSpan parses a .NET TimeSpan ("[d.]hh:mm:ss[.fff]"); "-1" means unbounded (0).
func parseTimeSpan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return 0, nil
	}
	m := timeSpanRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a [d.]hh:mm:ss time span", s)
	}
	num := func(v string) time.Duration { n, _ := strconv.Atoi(v); return time.Duration(n) }
	d := num(m[1])*24*time.Hour + num(m[2])*time.Hour + num(m[3])*time.Minute + num(m[4])*time.Second
	if m[5] != "" {
		frac, _ := strconv.ParseFloat("0."+m[5], 64)
		d += time.Duration(frac * float64(time.Second))
	}
	if d < 0 || len(s) > 24 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return d, nil
}

// function is one loaded function.json.
type function struct {
	Name     string
	Disabled bool
	Bindings []funchost.Binding
	// HTTP trigger state, when the trigger is an httpTrigger.
	Trigger  funchost.Binding
	Template *funchost.RouteTemplate
	Methods  []string // upper-case; nil = all, empty (`"methods": []`) = none
	Auth     funchost.AuthLevel
}

type functionFile struct {
	Disabled json.RawMessage    `json:"disabled"`
	Bindings []funchost.Binding `json:"bindings"`
}

// trigger returns the function's input trigger binding.
func (f *function) trigger() (funchost.Binding, bool) {
	for _, b := range f.Bindings {
		if strings.EqualFold(b.Direction, "in") && strings.HasSuffix(strings.ToLower(b.Type), "trigger") {
			return b, true
		}
	}
	return funchost.Binding{}, false
}

func (f *function) isHTTP() bool {
	return strings.EqualFold(f.Trigger.Type, "httpTrigger")
}

// httpInOut reports the host's "http in and out" shape: exactly one input binding (an
// httpTrigger) and exactly one output binding (http).
func (f *function) httpInOut() bool {
	var in, out []funchost.Binding
	for _, b := range f.Bindings {
		switch strings.ToLower(b.Direction) {
		case "in":
			in = append(in, b)
		case "out":
			out = append(out, b)
		}
	}
	return len(in) == 1 && strings.EqualFold(in[0].Type, "httpTrigger") && len(out) == 1 && strings.EqualFold(out[0].Type, "http")
}

// httpOutput returns the name of the http output binding ("$return" included), if any.
func (f *function) httpOutput() (string, bool) {
	for _, b := range f.Bindings {
		if strings.EqualFold(b.Direction, "out") && strings.EqualFold(b.Type, "http") {
			return b.Name, true
		}
	}
	return "", false
}

// loadFunctions discovers `<appRoot>/*/function.json` (direct subfolders only), validates
// names, resolves the bindings' %NAME% expressions from the app settings (lookup) and sorts
// the functions by name (ordinal, case-insensitive). Folders with an invalid name, an
// unreadable function.json or a binding the host cannot index are reported in failed.
func loadFunctions(appRoot string, settings func(string) string, lookup func(string) (string, bool)) (fns []*function, failed map[string]error, err error) {
	entries, err := os.ReadDir(appRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("load functions: %w", err)
	}
	failed = map[string]error{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(appRoot, e.Name(), "function.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			failed[e.Name()] = fmt.Errorf("read function.json: %w", err)
			continue
		}
		if err := funchost.ValidateFunctionName(e.Name()); err != nil {
			failed[e.Name()] = err
			continue
		}
		var ff functionFile
		if err := json.Unmarshal(data, &ff); err != nil {
			failed[e.Name()] = fmt.Errorf("parse function.json: %w", err)
			continue
		}
		bindings, err := resolveBindings(ff.Bindings, lookup)
		if err != nil {
			failed[e.Name()] = fmt.Errorf("error indexing method 'Functions.%s': %w", e.Name(), err)
			continue
		}
		f := &function{Name: e.Name(), Bindings: bindings, Disabled: isDisabled(ff.Disabled, settings)}
		if v := settings("AzureWebJobs." + f.Name + ".Disabled"); strings.EqualFold(v, "true") || v == "1" {
			f.Disabled = true
		}
		trig, ok := f.trigger()
		if !ok {
			failed[f.Name] = errors.New("function.json has no trigger binding")
			continue
		}
		f.Trigger = trig
		fns = append(fns, f)
	}
	slices.SortStableFunc(fns, func(a, b *function) int { return funchost.CompareFunctionNames(a.Name, b.Name) })
	return fns, failed, nil
}

// isDisabled reads function.json's `disabled`: a bool, or a string naming an app setting.
func isDisabled(raw json.RawMessage, settings func(string) string) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		v := settings(s)
		return strings.EqualFold(v, "true") || v == "1"
	}
	return false
}

// prepareHTTP validates the HTTP functions in host order, as the host does at startup: the
// default route is the function name; `admin`/`runtime` prefixes are rejected; of two
// identical routes with intersecting methods only the later function fails. Overlapping,
// non-identical routes are allowed. It returns the routable functions in order.
func prepareHTTP(fns []*function, failed map[string]error) []*function {
	var routes []*function
	for _, f := range fns {
		if !f.isHTTP() {
			continue
		}
		route := f.Trigger.Route
		if strings.TrimSpace(route) == "" {
			route = f.Name
		}
		if funchost.IsReservedRoute(route) {
			failed[f.Name] = fmt.Errorf("the specified route conflicts with one or more built in routes")
			continue
		}
		level := funchost.AuthFunction
		if f.Trigger.AuthLevel != "" {
			l, err := funchost.ParseAuthLevel(f.Trigger.AuthLevel)
			if err != nil {
				failed[f.Name] = err
				continue
			}
			level = l
		}
		t, err := funchost.ParseRouteTemplate(route)
		if err != nil {
			failed[f.Name] = err
			continue
		}
		f.Template, f.Auth = t, level
		if f.Trigger.Methods != nil {
			// The host's method constraint compares case-insensitively, untrimmed; an empty
			// list is a constraint that nothing satisfies.
			f.Methods = []string{}
			for _, m := range f.Trigger.Methods {
				if m = strings.ToUpper(m); !slices.Contains(f.Methods, m) {
					f.Methods = append(f.Methods, m)
				}
			}
		}
		if other := identicalRoute(routes, f); other != nil {
			failed[f.Name] = fmt.Errorf("the route specified conflicts with the route defined by function '%s'", other.Name)
			continue
		}
		routes = append(routes, f)
	}
	return routes
}

func identicalRoute(loaded []*function, f *function) *function {
	for _, o := range loaded {
		// The host intersects the methods as written (ordinal), an empty list meaning all.
		if strings.EqualFold(o.Template.String(), f.Template.String()) && funchost.MethodsIntersect(o.Trigger.Methods, f.Trigger.Methods) {
			return o
		}
	}
	return nil
}

// matchRoute finds the first routable function (in name order) whose methods and template
// match; a method mismatch falls through to later routes, and `"methods": []` matches nothing.
func matchRoute(routes []*function, method, path string) (*function, map[string]*string) {
	method = strings.ToUpper(method)
	for _, f := range routes {
		if f.Methods != nil && !slices.Contains(f.Methods, method) {
			continue
		}
		if values, ok := f.Template.Match(path); ok {
			return f, values
		}
	}
	return nil, nil
}
