package launch

import (
	"bytes"
	_ "embed" // the built-in host.json template
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// Settings of the built-in host.json (renderHostJSON), chosen to agree with the durable engine.
const (
	// hostMaxDequeueCount is extensions.queues.maxDequeueCount. It equals the engine's
	// default MaxDequeueCount, so the engine fails a run whose work item keeps failing at the
	// fifth delivery, with a clear error, instead of the host moving the item to
	// <queue>-poison behind its back.
	hostMaxDequeueCount = 5
	// hostVisibilityTimeout is extensions.queues.visibilityTimeout: how long a work item
	// whose invocation failed stays hidden before the host delivers it again (the host's
	// default is 0: at once). The 5 deliveries of an item are then spread over at least
	// 4 × 30 s = 2 min, four times a 30 s storage outage, so an outage that makes every
	// delivery fail still leaves a delivery after storage is back before the item runs out
	// (a failing item used to spend its 5 deliveries in a few seconds and be poisoned while
	// the run stayed stuck). The price is 30 s of delay for a run after a failed delivery,
	// which only failures pay.
	hostVisibilityTimeout = 30 * time.Second
	// hostMaxPollingInterval is extensions.queues.maxPollingInterval: an idle app polls the
	// work queue at least every 2 s (the host's default is 1 min), so a run started while
	// the queue was idle waits at most about 2 s for its first step.
	hostMaxPollingInterval = 2 * time.Second
	// hostFunctionTimeout is functionTimeout: the engine hands a run back to the queue after
	// its StepBudget (1 min by default), so only a single node handler running close to
	// 10 minutes would reach it (the host then restarts the whole handler process).
	hostFunctionTimeout = 10 * time.Minute
)

//go:embed host.json.tmpl
var hostJSONTemplate string

var hostJSONTmpl = template.Must(template.New("host.json").Funcs(template.FuncMap{
	"json": func(s string) (string, error) {
		b, err := json.Marshal(s)
		return string(b), err
	},
	"span": func(d time.Duration) string { return `"` + timeSpan(d) + `"` },
}).Parse(hostJSONTemplate))

// renderHostJSON renders the built-in host.json of a funcgraph app: a custom handler started
// as exe (a file name in the app root), routes under routePrefix, the queue settings above and
// functionTimeout hostFunctionTimeout. With proxying (enableProxyingHttpRequest) the host
// passes the callers' own requests of every HTTP function to the handler and streams the
// answers back, which the runs feed's event stream needs to be live; without it (and on
// hosts older than the setting, which ignore it) HTTP functions are JSON invocations, and
// the feed's event stream is a long poll. Forwarding stays off. `stage` and `hostjson` write
// it; the repository's host.json is renderHostJSON("funcgraph", "api", true).
func renderHostJSON(exe, routePrefix string, proxying bool) ([]byte, error) {
	if exe == "" || strings.ContainsAny(exe, `/\`) || exe == "." || exe == ".." {
		return nil, fmt.Errorf("host.json: executable name %q: want a plain file name", exe)
	}
	var buf bytes.Buffer
	err := hostJSONTmpl.Execute(&buf, map[string]any{
		"Executable": exe, "RoutePrefix": routePrefix, "MaxDequeueCount": hostMaxDequeueCount,
		"VisibilityTimeout": hostVisibilityTimeout, "MaxPollingInterval": hostMaxPollingInterval,
		"FunctionTimeout": hostFunctionTimeout, "Proxying": proxying,
	})
	if err != nil {
		return nil, fmt.Errorf("render host.json: %w", err)
	}
	return buf.Bytes(), nil
}

// timeSpan formats d as a .NET TimeSpan, hh:mm:ss.
func timeSpan(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// stepLeaseFrom returns the engine's StepLease under the Functions host: host.json's
// functionTimeout at path (the app root is the handler's working directory), past which the
// host kills an invocation, so a step's hold older than it belongs to a dead worker. When the
// file is missing or unreadable, sets no timeout or no limit ("-1"), it is
// hostFunctionTimeout, the built-in host.json's.
func stepLeaseFrom(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return hostFunctionTimeout
	}
	var doc struct {
		FunctionTimeout string `json:"functionTimeout"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return hostFunctionTimeout
	}
	if d, ok := parseTimeSpan(doc.FunctionTimeout); ok && d > 0 {
		return d
	}
	return hostFunctionTimeout
}

// parseTimeSpan reads a .NET TimeSpan, "[d.]hh:mm:ss[.fffffff]", as host.json writes it.
func parseTimeSpan(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	var days int64
	if dot, colon := strings.IndexByte(s, '.'), strings.IndexByte(s, ':'); dot >= 0 && dot < colon {
		n, err := strconv.ParseInt(s[:dot], 10, 32)
		if err != nil || n < 0 {
			return 0, false
		}
		days, s = n, s[dot+1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 32)
	m, err2 := strconv.ParseInt(parts[1], 10, 32)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || m < 0 || m > 59 || sec < 0 || sec >= 60 {
		return 0, false
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	return d + time.Duration(sec*float64(time.Second)), true
}

// hostJSONCommand implements `hostjson [--out host.json] [--exe name] [--proxying=false]`: the
// built-in host.json for this app (its route prefix), naming exe, proxying unless told not to.
func hostJSONCommand(app *App, args []string, program string) error {
	fs := flag.NewFlagSet("hostjson", flag.ContinueOnError)
	out := fs.String("out", "host.json", "where to write")
	exe := fs.String("exe", program, "executable name the host starts (a file in the app root)")
	proxying := fs.Bool("proxying", true, proxyingUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := renderHostJSON(*exe, app.FunctionApp.RoutePrefix(), *proxying)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return fmt.Errorf("write host.json: %w", err)
	}
	return nil
}

// proxyingUsage describes the --proxying flag of stage and hostjson.
const proxyingUsage = "enableProxyingHttpRequest: the host passes requests through and streams answers (the runs feed's event stream is live); false keeps JSON invocations (the event stream is a long poll)"

// hostJSONForHandler is what the custom handler takes from the host.json at path (the app
// root is its working directory): whether the host proxies HTTP requests
// (customHandler.enableProxyingHttpRequest, a JSON true or a "true" string in any case, as the
// host binds it), and the functionTimeout within which a proxied answer must be complete:
// as written, 0 (none) for "-1", and when unset or unreadable the shortest the host applies
// unset (5 min, on the Consumption plan). A missing or unreadable file proxies nothing.
func hostJSONForHandler(path string) (proxying bool, timeout time.Duration) {
	timeout = consumptionFunctionTimeout
	b, err := os.ReadFile(path)
	if err != nil {
		return false, timeout
	}
	var doc struct {
		CustomHandler struct {
			Proxying json.RawMessage `json:"enableProxyingHttpRequest"`
		} `json:"customHandler"`
		FunctionTimeout string `json:"functionTimeout"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return false, timeout
	}
	var raw any
	if json.Unmarshal(doc.CustomHandler.Proxying, &raw) == nil {
		switch v := raw.(type) {
		case bool:
			proxying = v
		case string:
			proxying = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	if strings.TrimSpace(doc.FunctionTimeout) == "-1" {
		return proxying, 0
	}
	if d, ok := parseTimeSpan(doc.FunctionTimeout); ok && d > 0 {
		timeout = d
	}
	return proxying, timeout
}

// consumptionFunctionTimeout is the host's functionTimeout on the Consumption plan when
// host.json sets none (elsewhere it is 30 min).
const consumptionFunctionTimeout = 5 * time.Minute

func programName() string {
	if len(os.Args) == 0 {
		return "funcgraph"
	}
	return filepath.Base(os.Args[0])
}
