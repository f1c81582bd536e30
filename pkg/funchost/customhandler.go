package funchost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
	"runtime/debug"
	"strings"
	"time"
)

// Binding names used in generated function.json files.
const (
	httpTriggerBinding  = "req"
	httpOutputBinding   = "res"
	queueTriggerBinding = "msg"
	timerTriggerBinding = "timer"
)

// maxInvocationBytes bounds an invocation payload for a caller body limit of bodyLimit bytes.
// The body reaches the handler JSON-escaped in Data (each byte at most 6: a control character
// becomes \u00XX; base64 is 4/3) and, when it is a JSON object, a second time in Metadata, one
// double-encoded entry per top-level member (at most 2 bytes per byte, as is its escaped copy in
// Data then). Headers appear twice as well. So 6 × bodyLimit plus 1 MiB for the rest.
func maxInvocationBytes(bodyLimit int64) int64 {
	if bodyLimit <= 0 {
		bodyLimit = DefaultMaxRequestBodyBytes
	}
	return 6*bodyLimit + 1<<20
}

// HandlerOptions configures the custom-handler server.
type HandlerOptions struct {
	// Logger receives protocol errors and recovered panics; nil means slog.Default().
	Logger *slog.Logger
	// MaxRequestBodyBytes is the host's caller body limit (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT);
	// 0 means the host's 100 MB. An invocation payload may be six times this plus 1 MiB (the
	// body arrives escaped, and a JSON body twice).
	MaxRequestBodyBytes int64
	// Proxying is host.json's customHandler.enableProxyingHttpRequest: the host then passes
	// the caller's own request of an http-in/http-out function to the handler at its original
	// path and streams the answer back as it is written. A request at its original path is
	// then served as proxied (Proxied); without it, as forwarded (enableForwardingHttpRequest),
	// whose answer the host hands over whole.
	Proxying bool
	// FunctionTimeout is the functionTimeout the host applies (0: none): a proxied request's
	// answer must be complete within it of the request's arrival (Proxied's deadline), or
	// the host restarts the whole handler process.
	FunctionTimeout time.Duration
}

// CustomHandler returns the server the Functions host talks to. It answers `GET /` for
// readiness, decodes JSON invocations posted to `/{FunctionName}`, and also serves requests the
// host forwards (enableForwardingHttpRequest) or proxies (enableProxyingHttpRequest:
// HandlerOptions.Proxying) at their original path, which the host has already authorised.
func (a *FunctionApp) CustomHandler(opts HandlerOptions) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &customHandler{
		prefix: a.routePrefix,
		router: newRouter(a.http),
		http:   map[string]*httpEntry{},
		queues: map[string]QueueFunction{},
		timers: map[string]TimerFunction{},
		logger: logger,
		maxInv: maxInvocationBytes(opts.MaxRequestBodyBytes),
		proxy:  opts.Proxying,
		limit:  opts.FunctionTimeout,
	}
	for _, e := range a.http {
		s.http[strings.ToLower(e.fn.Name)] = e
	}
	for _, q := range a.queues {
		s.queues[strings.ToLower(q.Name)] = q
	}
	for _, t := range a.timers {
		s.timers[strings.ToLower(t.Name)] = t
	}
	return s
}

type customHandler struct {
	prefix string
	router *router
	http   map[string]*httpEntry
	queues map[string]QueueFunction
	timers map[string]TimerFunction
	logger *slog.Logger
	maxInv int64
	proxy  bool          // requests at their original path are proxied (HandlerOptions.Proxying)
	limit  time.Duration // functionTimeout, 0 for none
}

func (s *customHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.WriteHeader(http.StatusOK) // readiness: any answer means ready
		return
	}
	if name, ok := s.invocationTarget(r); ok {
		s.serveInvocation(w, r, name)
		return
	}
	s.serveForwarded(w, r)
}

// invocationTarget reports whether r is a JSON invocation: a POST to `/{FunctionName}` of a
// known function.
func (s *customHandler) invocationTarget(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost {
		return "", false
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" || strings.Contains(name, "/") {
		return "", false
	}
	key := strings.ToLower(name)
	_, h := s.http[key]
	_, q := s.queues[key]
	_, t := s.timers[key]
	return key, h || q || t
}

func (s *customHandler) serveInvocation(w http.ResponseWriter, r *http.Request, name string) {
	id := invocationIDHeader(r.Header)
	if e, ok := s.http[name]; ok {
		s.serveHTTPInvocation(w, r, e, id)
		return
	}
	ctx := WithInvocationID(r.Context(), id)
	resp, err := s.invoke(ctx, r, name)
	if err != nil {
		s.invocationFailed(w, name, id, err)
		return
	}
	writeInvocationResponse(w, http.StatusOK, resp, s.logger)
}

// invocationIDHeader is r.Header.Get("X-Azure-Functions-InvocationId") without building the
// name's canonical form on every call.
func invocationIDHeader(h http.Header) string {
	if v := h[canonicalInvocationIDHeader]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// canonicalInvocationIDHeader is the canonical form of X-Azure-Functions-InvocationId.
var canonicalInvocationIDHeader = textproto.CanonicalMIMEHeaderKey("X-Azure-Functions-InvocationId")

// invocationFailed answers the host with a failed invocation. Only the host sees the status;
// the error text stays in our log.
func (s *customHandler) invocationFailed(w http.ResponseWriter, name, id string, err error) {
	s.logger.Error("invocation failed", "function", name, "invocation_id", id, "error", err)
	resp := &invocationResponse{Outputs: map[string]any{}, Logs: []string{"invocation failed"}}
	writeInvocationResponse(w, invocationStatus(err), resp, s.logger)
}

// functionLogger is the logger for one function's invocation; built only when needed.
func (s *customHandler) functionLogger(ctx context.Context, name string) *slog.Logger {
	return s.logger.With("function", name, "invocation_id", InvocationID(ctx))
}

func (s *customHandler) invoke(ctx context.Context, r *http.Request, name string) (*invocationResponse, error) {
	body, err := readBody(r, s.maxInv, nil)
	if err != nil {
		return nil, err
	}
	var req invocationRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadInvocation, err)
	}
	if q, ok := s.queues[name]; ok {
		msg, err := decodeQueueMessage(&req, queueTriggerBinding)
		if err != nil {
			return nil, err
		}
		return runTriggered(ctx, s.functionLogger(ctx, name), func(ctx context.Context) (Outputs, error) { return q.Handler(ctx, msg) })
	}
	if t, ok := s.timers[name]; ok {
		info, err := decodeTimerInfo(&req, timerTriggerBinding)
		if err != nil {
			return nil, err
		}
		return runTriggered(ctx, s.functionLogger(ctx, name), func(ctx context.Context) (Outputs, error) { return t.Handler(ctx, info) })
	}
	return nil, fmt.Errorf("%w: %q", errUnknownFunction, name)
}

// runTriggered runs a non-HTTP handler, turning a panic into an invocation failure.
func runTriggered(ctx context.Context, logger *slog.Logger, fn func(context.Context) (Outputs, error)) (resp *invocationResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			logger.Error("handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, errors.New("handler panicked")
		}
	}()
	out, err := fn(ctx)
	if err != nil {
		return nil, fmt.Errorf("handler: %w", err)
	}
	if out == nil {
		out = Outputs{}
	}
	return &invocationResponse{Outputs: out, Logs: []string{}}, nil
}

// serveRecovered serves one request, answering 500 with an empty body if the handler panics.
func serveRecovered(h http.Handler, w http.ResponseWriter, r *http.Request, logger func() *slog.Logger) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				return
			}
			logger().Error("handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if c, ok := w.(*responseCapture); ok {
				c.header = make(http.Header)
				c.body.Reset()
				c.status, c.wroteHeader = http.StatusInternalServerError, true
				return
			}
			w.WriteHeader(http.StatusInternalServerError)
		}
	}()
	h.ServeHTTP(w, r)
}

// serveForwarded serves a request forwarded or proxied by the host at its original path. The
// host has matched the route and checked the key already; this only finds the handler. A
// proxied request arrives with the handler's own address as Host, the caller's in
// X-Forwarded-Host (which the host's proxy sets, replacing any the caller sent): r.Host is
// the caller's again, as in a JSON invocation's URL.
func (s *customHandler) serveForwarded(w http.ResponseWriter, r *http.Request) {
	if s.proxy {
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			r.Host = h
		}
	}
	e := s.router.route(r, s.prefix)
	if e == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var ctx context.Context
	if s.proxy {
		info := invocationInfo{id: invocationIDHeader(r.Header), source: SourceHost, proxied: true}
		if s.limit > 0 {
			info.deadline = time.Now().Add(s.limit)
		}
		ctx = &invocationContext{r.Context(), info}
	} else {
		ctx = withInvocation(r.Context(), invocationIDHeader(r.Header), nil)
	}
	serveFunction(e, w, r.WithContext(ctx), func() *slog.Logger { return s.functionLogger(ctx, e.fn.Name) })
}

func writeInvocationResponse(w http.ResponseWriter, status int, resp *invocationResponse, logger *slog.Logger) {
	body, err := json.Marshal(resp)
	if err != nil {
		logger.Error("encode invocation response", "error", err)
		status, body = http.StatusInternalServerError, []byte(`{"Outputs":{},"Logs":[],"ReturnValue":null}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// readBody reads a request body of at most limit bytes into buf (a new buffer when nil),
// sized from Content-Length when known.
func readBody(r *http.Request, limit int64, buf *bytes.Buffer) ([]byte, error) {
	return readBodyVia(r, limit, buf, new(io.LimitedReader))
}

// readBodyVia is readBody reading through lr, left without the body.
func readBodyVia(r *http.Request, limit int64, buf *bytes.Buffer, lr *io.LimitedReader) ([]byte, error) {
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	if n := r.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + 1)
	}
	*lr = io.LimitedReader{R: r.Body, N: limit + 1}
	n, err := buf.ReadFrom(lr)
	lr.R = nil
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadInvocation, ClassifyBodyError(err))
	}
	if n > limit {
		return nil, fmt.Errorf("%w: payload exceeds %d bytes", errBadInvocation, limit)
	}
	return buf.Bytes(), nil
}
