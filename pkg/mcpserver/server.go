package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// Defaults of Options.
const (
	// DefaultName is the serverInfo.name when Options.Name is empty.
	DefaultName = "funcgraph"
	// DefaultVersion is the serverInfo.version when Options.Version is empty.
	DefaultVersion = "0.1.0"
	// DefaultMaxRequestBodyBytes caps request bodies when Options.MaxRequestBodyBytes is 0.
	DefaultMaxRequestBodyBytes = 1 << 20
	// DefaultMaxResultBytes caps a hosted tool's answer when Options.MaxResultBytes is 0.
	DefaultMaxResultBytes = 4 << 20
	// DefaultCallWait bounds how long a tool call waits for its run when Options.CallWait is 0.
	DefaultCallWait = 10 * time.Second
	// DefaultMaxInputDepth caps the nesting of a call's arguments and of an input response
	// when Options.MaxInputDepth is 0: the runs API's default.
	DefaultMaxInputDepth = host.DefaultMaxInputDepth
	// FunctionName is the function name of Function; its route is "mcp", under the route prefix.
	FunctionName = "fg_mcp"
)

// ErrInvalidOptions is wrapped by New for options that cannot work.
var ErrInvalidOptions = errors.New("mcpserver: invalid options")

// Options configures a Server. Runs and Registry are required; every other zero field means
// its default.
type Options struct {
	// Runs executes and stores the runs tool calls start (the engine).
	Runs engine.Runs
	// Registry holds the graphs offered as tools: its public graphs, the latest version of
	// each. The engine must use the same registry.
	Registry *durable.Registry
	// Hosted offers the graphs of a hosting app as tools too (hosted.go): a call runs the
	// graph in process through its invoke route, with every check of that route, and answers
	// its output. nil means the durable graphs only. A hosted graph named like a durable one
	// is left out, and so is one whose routes need a higher auth level than the endpoint's.
	Hosted *host.GraphHostApp
	// MaxResultBytes caps a hosted tool's answer (a tool error above it); 0 means
	// DefaultMaxResultBytes.
	MaxResultBytes int64
	// Isolation scopes runs to the caller that started them, as on the runs API; nil means
	// off.
	Isolation *isolation.Isolation
	// Logger receives request failures (never bodies or keys); nil means slog.Default().
	Logger *slog.Logger
	// RoutePrefix is the host route prefix of the status URLs tool results name; "" means
	// "api". It must match host.json.
	RoutePrefix string
	// MaxRequestBodyBytes caps request bodies (413 above it); 0 means
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MaxInputDepth caps the nesting of a tool call's arguments (a tool error deeper, nothing
	// started) and of a tasks/update input response (-32602), a top-level container being
	// depth 1; 0 means DefaultMaxInputDepth.
	MaxInputDepth int
	// CallWait bounds how long a tool call waits for its run to finish before it answers
	// with the run's id and status; 0 means DefaultCallWait. It must be below
	// funchost.FrontEndTimeout.
	CallWait time.Duration
	// Name and Version are the serverInfo the server announces; "" means DefaultName and
	// DefaultVersion.
	Name, Version string
}

// Validate reports options that cannot work (ErrInvalidOptions).
func (o Options) Validate() error {
	switch {
	case o.Runs == nil:
		return fmt.Errorf("%w: Runs is required", ErrInvalidOptions)
	case o.Registry == nil:
		return fmt.Errorf("%w: Registry is required", ErrInvalidOptions)
	case o.MaxRequestBodyBytes < 0:
		return fmt.Errorf("%w: MaxRequestBodyBytes must not be negative", ErrInvalidOptions)
	case o.MaxResultBytes < 0:
		return fmt.Errorf("%w: MaxResultBytes must not be negative", ErrInvalidOptions)
	case o.MaxInputDepth < 0:
		return fmt.Errorf("%w: MaxInputDepth must not be negative", ErrInvalidOptions)
	case o.CallWait < 0 || o.CallWait >= funchost.FrontEndTimeout:
		return fmt.Errorf("%w: CallWait must be within 0..%s", ErrInvalidOptions, funchost.FrontEndTimeout)
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
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxInputDepth == 0 {
		o.MaxInputDepth = DefaultMaxInputDepth
	}
	if o.CallWait == 0 {
		o.CallWait = DefaultCallWait
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	return o
}

// Server is the MCP endpoint: an http.Handler answering POST requests of the streamable
// HTTP transport, statelessly. It holds no state of its own and is safe for concurrent use.
type Server struct {
	opts   Options
	tools  []tool
	hosted []hostedTool
	level  funchost.AuthLevel // the endpoint's, set by Function
	http   http.Handler       // the SDK's, answering application/json
	stream http.Handler       // the SDK's, answering text/event-stream: a call that asks for progress
}

// New returns the MCP endpoint over opts.Registry's public graphs, as they are registered
// when it is called.
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts.withDefaults()}
	tools, err := graphTools(s.opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	s.tools = tools
	s.hosted = hostedTools(s.opts.Hosted, tools)
	s.level = funchost.AuthFunction
	sdk := func(json bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(s.mcpServer, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: json,
			// The body is bounded before the SDK reads it (ServeHTTP), with our answer.
			MaxRequestBodyBytes: -1,
			Logger:              s.opts.Logger,
			// Requests reach this handler through the Functions host or a proxy, whose Host
			// header is the public one.
			DisableLocalhostProtection: true,
			// A client that goes away ends the wait of its call.
			PropagateRequestCancellation: true,
		})
	}
	s.http, s.stream = sdk(true), sdk(false)
	return s, nil
}

// Function returns the endpoint as a function of a funchost.FunctionApp: POST
// /{prefix}/mcp at level ("" means funchost.AuthFunction). Call it before the endpoint
// serves: the level also decides which hosted graphs are offered (Options.Hosted).
func (s *Server) Function(level funchost.AuthLevel) funchost.HTTPFunction {
	if level == "" {
		level = funchost.AuthFunction
	}
	s.level = level
	return funchost.HTTPFunction{
		Name: FunctionName, Route: "mcp", Methods: []string{http.MethodPost}, AuthLevel: level, Handler: s,
		Doc: funchost.RouteDoc{
			Summary:     "Model Context Protocol endpoint",
			Description: "Streamable HTTP, stateless: the durable graphs as tools (docs/mcp.md).",
			Tags:        []string{"mcp"},
		},
	}
}

// ServeHTTP answers one request of the streamable HTTP transport. A caller isolation refuses
// is answered 401, 403 or 400 and a body past Options.MaxRequestBodyBytes 413, each with a
// JSON-RPC error body; the task methods are answered here (tasks.go); the rest is the SDK's.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.opts.MaxRequestBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, fmt.Sprintf("request body too large: the limit is %d bytes", s.opts.MaxRequestBodyBytes))
		return
	}
	c := isolation.Caller{Admin: true}
	if s.opts.Isolation != nil {
		var err error
		if c, err = s.opts.Isolation.Caller(r); err != nil {
			writeCallerError(w, err)
			return
		}
	}
	info := requestInfo{caller: c, base: requestBase(r), req: r}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBodyBytes))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, fmt.Sprintf("request body too large: the limit is %d bytes", s.opts.MaxRequestBodyBytes))
			return
		case err != nil:
			writeError(w, http.StatusBadRequest, codeInvalidRequest, "the request body could not be read")
			return
		}
		if s.serveTaskMethod(w, r, body, info) {
			return
		}
		info.progress = asksProgress(body)
	}
	r = r.WithContext(context.WithValue(r.Context(), requestKey{}, info))
	if info.progress {
		s.stream.ServeHTTP(w, r) // progress notifications go out before the result
		return
	}
	s.http.ServeHTTP(w, r)
}

// requestKey carries a request's requestInfo to mcpServer.
type requestKey struct{}

// requestInfo is what a request's tool calls need of it.
type requestInfo struct {
	caller isolation.Caller
	base   string        // scheme://host of the status URLs
	req    *http.Request // for a hosted tool's invoke: its caller's headers, peer and context values
	// progress: the request is a tools/call with a progress token, answered as an event
	// stream whose progress notifications precede the result (progress.go).
	progress bool
}

// mcpServer returns the MCP server of one request: the tools, bound to its caller. Nothing
// of it outlives the request.
func (s *Server) mcpServer(r *http.Request) *mcp.Server {
	info, ok := r.Context().Value(requestKey{}).(requestInfo)
	if !ok {
		return nil // not through ServeHTTP: the SDK answers 400
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &mcp.ServerOptions{
		Logger:       s.opts.Logger,
		Capabilities: &mcp.ServerCapabilities{Extensions: map[string]any{ExtensionTasks: map[string]any{}}},
		Instructions: "A durable graph's tool starts a durable run of the graph it is named after; a run that outlasts the call is followed at its status URL. A hosted graph's tool runs it within the call.",
	})
	srv.AddReceivingMiddleware(taskMiddleware)
	for _, t := range s.tools {
		srv.AddTool(t.def, s.callHandler(t, info))
	}
	for _, t := range s.hosted {
		if s.offered(t) {
			srv.AddTool(t.def, s.hostedHandler(t, info))
		}
	}
	return srv
}
