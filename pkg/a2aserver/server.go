package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Defaults of Options.
const (
	// DefaultMaxRequestBodyBytes caps a JSON-RPC request body when
	// Options.MaxRequestBodyBytes is 0.
	DefaultMaxRequestBodyBytes = 1 << 20
	// DefaultMaxWait bounds how long a blocking SendMessage or a stream waits for the task
	// to finish or need input when Options.MaxWait is 0.
	DefaultMaxWait = host.DefaultMaxWait
	// DefaultMaxResultBytes caps a hosted graph's answer when Options.MaxResultBytes is 0.
	DefaultMaxResultBytes = 4 << 20
)

// Function names and routes (below the route prefix) of the endpoint.
const (
	FuncAgentCard = "a2a_agent_card"
	FuncJSONRPC   = "a2a_jsonrpc"
	RouteJSONRPC  = "a2a/{graph_name}"
	RouteCard     = "a2a/{graph_name}/.well-known/agent-card.json"
)

// ErrInvalidOptions is wrapped by New for options that cannot work.
var ErrInvalidOptions = errors.New("a2aserver: invalid options")

// Options configures a Server. Runs and Registry are required.
type Options struct {
	// Runs starts, reads, cancels and lists the runs (the engine). A Runs that is an
	// engine.RunFeeder (the engine is) serves blocking sends and streams from the run's feed;
	// another answers blocking sends at once and refuses streams.
	Runs engine.Runs
	// Registry holds the durable graphs served: each public graph is an agent.
	Registry *durable.Registry
	// Hosted serves the graphs of a hosting app as agents too (hosted.go): a message runs the
	// graph within the request through its invoke route, with every check of that route, and
	// is answered by a message; a graph with a checkpointer keeps a thread per contextId. nil
	// means the durable graphs only. A durable graph of the same name is served instead, and a
	// hosted graph whose routes need a higher auth level than AuthLevel is not served.
	Hosted *host.GraphHostApp
	// MaxResultBytes caps a hosted graph's answer (an internal error above it); 0 means
	// DefaultMaxResultBytes.
	MaxResultBytes int64
	// TextFields names, per graph, the string member of its input that a new task's text
	// parts fill (e.g. "support_agent": "user_message"). A graph without one takes data
	// parts only.
	TextFields map[string]string
	// Isolation scopes tasks to the identity that created them, as the runs API does; nil
	// means off.
	Isolation *isolation.Isolation
	// AuthLevel is the routes' auth level; "" means funchost.AuthFunction.
	AuthLevel funchost.AuthLevel
	// RoutePrefix is the host route prefix, for the card's URL; "" means "api".
	RoutePrefix string
	// MaxRequestBodyBytes caps request bodies; 0 means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MaxInputDepth caps the nesting of a data part; 0 means host.DefaultMaxInputDepth.
	MaxInputDepth int
	// MaxWait bounds a blocking send and a stream (then answered with the task as it is); 0
	// means DefaultMaxWait. It must be below funchost.FrontEndTimeout.
	MaxWait time.Duration
	// Version is the agents' card version; "" means "1.0.0".
	Version string
	// Logger receives internal errors (never bodies); nil means slog.Default().
	Logger *slog.Logger
	// MemoryBudget is the byte budget of the in-memory stores Runs writes to; nil means
	// none. With it a request the budget cannot take (its declared body past the room left
	// for new work) is refused HTTP 507 before its body is read. Either way a request's
	// writes count against its caller (membudget.NewWork), as on the runs API.
	MemoryBudget *membudget.Budget
}

// Validate reports options that cannot work (ErrInvalidOptions).
func (o Options) Validate() error {
	switch {
	case o.Runs == nil:
		return fmt.Errorf("%w: Runs is required", ErrInvalidOptions)
	case o.Registry == nil:
		return fmt.Errorf("%w: Registry is required", ErrInvalidOptions)
	case o.MaxRequestBodyBytes < 0 || o.MaxInputDepth < 0 || o.MaxResultBytes < 0:
		return fmt.Errorf("%w: limits must not be negative", ErrInvalidOptions)
	case o.MaxWait < 0 || o.MaxWait >= funchost.FrontEndTimeout:
		return fmt.Errorf("%w: MaxWait must be within 0..%s", ErrInvalidOptions, funchost.FrontEndTimeout)
	}
	if o.AuthLevel != "" {
		if _, err := funchost.ParseAuthLevel(string(o.AuthLevel)); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
	}
	return nil
}

// Server is the A2A endpoint. It holds no state of its own and is safe for concurrent use.
type Server struct {
	opts Options
}

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.AuthLevel == "" {
		opts.AuthLevel = funchost.AuthFunction
	}
	if opts.RoutePrefix == "" {
		opts.RoutePrefix = funchost.DefaultRoutePrefix
	}
	if opts.MaxRequestBodyBytes == 0 {
		opts.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if opts.MaxInputDepth == 0 {
		opts.MaxInputDepth = host.DefaultMaxInputDepth
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{opts: opts}, nil
}

// Functions returns the endpoint's two HTTP functions: GET the agent card and POST JSON-RPC.
func (s *Server) Functions() []funchost.HTTPFunction {
	return []funchost.HTTPFunction{
		{Name: FuncAgentCard, Methods: []string{http.MethodGet}, Route: RouteCard, AuthLevel: s.opts.AuthLevel,
			Handler: http.HandlerFunc(s.serveCard), Doc: funchost.RouteDoc{Summary: "A2A v1.0 agent card of a durable graph", Tags: []string{"a2a"}}},
		{Name: FuncJSONRPC, Methods: []string{http.MethodPost}, Route: RouteJSONRPC, AuthLevel: s.opts.AuthLevel,
			Handler: http.HandlerFunc(s.serveRPC), Doc: funchost.RouteDoc{Summary: "A2A v1.0 JSON-RPC endpoint of a durable graph (tasks are its runs)", Tags: []string{"a2a"}}},
	}
}

// Register adds the endpoint's functions to app.
func (s *Server) Register(app *funchost.FunctionApp) error {
	for _, fn := range s.Functions() {
		if err := app.HandleHTTP(fn); err != nil {
			return fmt.Errorf("register a2a endpoint: %w", err)
		}
	}
	return nil
}

// graph returns the public durable graph the request names, or false.
func (s *Server) graph(r *http.Request) (durable.Graph, bool) {
	name := r.PathValue("graph_name")
	if s.opts.Registry.Internal(name) {
		return nil, false
	}
	g, err := s.opts.Registry.Latest(name)
	return g, err == nil
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// serveRPC serves POST /api/a2a/{graph_name}. Transport failures answer an HTTP status with a
// JSON-RPC error body (404 unknown graph, 401/403/400 an unresolved caller, 507 the memory
// budget full, 413 body too large); everything else is HTTP 200 with a JSON-RPC result or
// error.
func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	g, durableOK := s.graph(r)
	var hosted hostedAgent
	hostedOK := false
	if !durableOK {
		g = nil
		hosted, hostedOK = s.hosted(r.PathValue("graph_name"))
	}
	if !durableOK && !hostedOK {
		writeRPC(w, http.StatusNotFound, nil, nil, rpcErr(CodeInvalidRequest, "no agent named %q", r.PathValue("graph_name")))
		return
	}
	c, status, cerr := s.resolveCaller(r)
	if cerr != nil {
		writeRPC(w, status, nil, nil, cerr)
		return
	}
	owner := c.ID
	if c.Admin {
		owner = ""
	}
	r = r.WithContext(membudget.NewWork(r.Context(), owner))
	if err := apierror.NewWorkRefused(r.Context(), s.opts.MemoryBudget, r, s.opts.MaxRequestBodyBytes); err != nil {
		writeRPC(w, http.StatusInsufficientStorage, nil, nil, rpcErr(CodeInternalError, "%s", err.Error()))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPC(w, http.StatusRequestEntityTooLarge, nil, nil, rpcErr(CodeInvalidRequest, "request body exceeds %d bytes", s.opts.MaxRequestBodyBytes))
			return
		}
		writeRPC(w, http.StatusBadRequest, nil, nil, rpcErr(CodeInvalidRequest, "request body could not be read"))
		return
	}
	var req rpcRequest
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		writeRPC(w, http.StatusOK, nil, nil, rpcErr(CodeInvalidRequest, "batch requests are not supported"))
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeRPC(w, http.StatusOK, nil, nil, rpcErr(CodeParseError, "parse error: the body is not a JSON-RPC request object"))
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPC(w, http.StatusOK, req.ID, nil, rpcErr(CodeInvalidRequest, `invalid request: want "jsonrpc": "2.0" and a method`))
		return
	}
	call := &call{s: s, graph: g, caller: c, r: r}
	if hostedOK {
		s.serveHostedRPC(w, call, hosted, req)
		return
	}
	if stream, ok := streamMethods[req.Method]; ok {
		s.serveStream(w, call, req, stream)
		return
	}
	m, ok := methods[req.Method]
	if !ok {
		writeRPC(w, http.StatusOK, req.ID, nil, rpcErr(CodeMethodNotFound, "method not found: %s", req.Method))
		return
	}
	result, err := m(call, req.Params)
	if err != nil {
		writeRPC(w, http.StatusOK, req.ID, nil, s.answerError(r.Context(), req.Method, err))
		return
	}
	writeRPC(w, http.StatusOK, req.ID, result, nil)
}

// answerError returns the error object of err, logging an internal one.
func (s *Server) answerError(ctx context.Context, method string, err error) *Error {
	e, internal := rpcError(err)
	if internal {
		s.opts.Logger.ErrorContext(ctx, "a2a request failed", "method", method, "error", err)
	}
	return e
}

func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, e *Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e})
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// decodeParams decodes a method's params object into v, unknown members ignored.
func decodeParams(params json.RawMessage, v any) error {
	if t := bytes.TrimSpace(params); len(t) == 0 || t[0] != '{' {
		return rpcErr(CodeInvalidParams, "invalid params: want an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return rpcErr(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}
