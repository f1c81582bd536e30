package host

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// Registration errors, besides ErrEmptyName and ErrInvalidName. Messages of the returned
// errors are the contract's; branch with errors.Is.
var (
	// ErrNotAGraph reports a nil graph: `Graph must have an invoke() method. Got <type>`.
	ErrNotAGraph = errors.New("host: not a graph")
	// ErrDuplicateName reports a name already registered, also when it differs only in case:
	// `Graph '<name>' is already registered`.
	ErrDuplicateName = errors.New("host: graph already registered")
)

// RegisterOptions configures one graph.
type RegisterOptions struct {
	// Description is shown in health details and the OpenAPI document.
	Description string
	// NoStream leaves out the stream route (default false: a graph that can stream gets
	// POST graphs/<name>/stream).
	NoStream bool
	// AuthLevel overrides the app level for this graph's invoke, stream and state routes;
	// "" means the app level.
	AuthLevel funchost.AuthLevel
	// RequestModel and ResponseModel are Go values (or reflect.Types) whose types describe
	// the graph's input and output in the OpenAPI document. Metadata only: requests are never
	// validated against them.
	RequestModel, ResponseModel any
	// LiveStream sends this graph's stream route frame by frame as the graph produces its
	// events (Options.LiveStream, for one graph); the default is the buffered stream.
	LiveStream bool
	// AsyncMode offers durable runs for this graph. It takes effect when a durable engine is
	// attached (see GraphHostApp.AsyncGraphs).
	AsyncMode bool
}

// GraphInfo describes a registered graph, as listed by health details.
type GraphInfo struct {
	Name            string  `json:"name"`
	Description     *string `json:"description"`
	HasCheckpointer bool    `json:"has_checkpointer"`
}

// hostedGraph is one registered graph.
type hostedGraph struct {
	name, description string
	graph             InvocableGraph
	auth              funchost.AuthLevel
	stream, async     bool
	live              bool // the stream route sends frame by frame (stream_live.go)
	requestModel      reflect.Type
	responseModel     reflect.Type
}

func (g *hostedGraph) hasCheckpointer() bool {
	c, ok := g.graph.(Checkpointed)
	return ok && c.HasCheckpointer()
}

func (g *hostedGraph) acceptsVersion() bool {
	v, ok := g.graph.(VersionedGraph)
	return ok && v.AcceptsVersion()
}

func (g *hostedGraph) info() GraphInfo {
	info := GraphInfo{Name: g.name, HasCheckpointer: g.hasCheckpointer()}
	if g.description != "" {
		d := g.description
		info.Description = &d
	}
	return info
}

// Register adds a graph under name and registers its functions: fg_<name>_invoke, and
// fg_<name>_stream unless opts.NoStream, and fg_<name>_state when graph is a
// StatefulGraph. A graph that is not a StreamableGraph answers its stream route with 501.
//
// Checks, in order: a nil graph (ErrNotAGraph), an empty name (ErrEmptyName), the graph name
// rule (ErrInvalidName), a name already taken, also ignoring case (ErrDuplicateName). A route
// the function app refuses is returned wrapped (funchost.ErrRouteConflict) and registers
// nothing.
func (a *GraphHostApp) Register(graph InvocableGraph, name string, opts RegisterOptions) error {
	if isNil(graph) {
		return apierror.Newf(ErrNotAGraph, "Graph must have an invoke() method. Got %s", goTypeName(graph))
	}
	if err := ValidateGraphName(name); err != nil {
		return err
	}
	g := &hostedGraph{
		name: name, description: opts.Description, graph: graph, auth: opts.AuthLevel,
		stream: !opts.NoStream, async: opts.AsyncMode, live: opts.LiveStream || a.opts.LiveStream,
		requestModel: modelType(opts.RequestModel), responseModel: modelType(opts.ResponseModel),
	}
	if g.auth == "" {
		g.auth = a.opts.AuthLevel
	}
	if _, err := funchost.ParseAuthLevel(string(g.auth)); err != nil {
		return fmt.Errorf("register graph %q: %w: %v", name, ErrInvalidOptions, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.claimLocked(name); err != nil {
		return err
	}
	fns := a.graphFunctions(g)
	if err := a.dryRun(fns); err != nil {
		a.releaseNameLocked(name)
		return fmt.Errorf("register graph %q: %w", name, err)
	}
	for _, fn := range fns {
		if err := a.app.HandleHTTP(fn); err != nil {
			// Only a function added concurrently by another surface gets here.
			a.releaseNameLocked(name)
			return fmt.Errorf("register graph %q: %w", name, err)
		}
	}
	if g.stream {
		a.streamType["fg_"+name+"_stream"] = true
	}
	a.graphs = append(a.graphs, g)
	return nil
}

// dryRun checks that fns can all be added to the app, so a refused route registers nothing.
func (a *GraphHostApp) dryRun(fns []funchost.HTTPFunction) error {
	scratch := funchost.NewFunctionApp()
	if err := scratch.Mount(a.app); err != nil {
		return err
	}
	for _, fn := range fns {
		if err := scratch.HandleHTTP(fn); err != nil {
			return err
		}
	}
	return nil
}

// graphFunctions returns the functions of one graph.
func (a *GraphHostApp) graphFunctions(g *hostedGraph) []funchost.HTTPFunction {
	tags := []string{g.name}
	fns := []funchost.HTTPFunction{{
		Name: "fg_" + g.name + "_invoke", Methods: []string{http.MethodPost}, Route: "graphs/" + g.name + "/invoke",
		AuthLevel: g.auth, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serveInvoke(w, r, g) }),
		Doc: funchost.RouteDoc{Summary: "Invoke " + g.name, Description: g.description, Tags: tags,
			Request: invokeRequestSchema(g.requestModel, false), Response: invokeResponseSchema(g.responseModel)},
	}}
	if g.stream {
		fns = append(fns, funchost.HTTPFunction{
			Name: "fg_" + g.name + "_stream", Methods: []string{http.MethodPost}, Route: "graphs/" + g.name + "/stream",
			AuthLevel: g.auth, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serveStream(w, r, g) }),
			Doc: funchost.RouteDoc{Summary: "Stream " + g.name + " (buffered SSE)", Description: g.description, Tags: tags,
				Request: invokeRequestSchema(g.requestModel, true), Response: sseSchema()},
		})
	}
	if _, ok := g.graph.(StatefulGraph); ok {
		fns = append(fns, funchost.HTTPFunction{
			Name: "fg_" + g.name + "_state", Methods: []string{http.MethodGet}, Route: "graphs/" + g.name + "/threads/{thread_id}/state",
			AuthLevel: g.auth, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serveState(w, r, g) }),
			Doc: funchost.RouteDoc{Summary: "Thread state of " + g.name, Tags: tags, Response: openapi.Ref("ThreadStateResponse")},
		})
	}
	return fns
}

// isNil reports a nil interface or an interface holding a nil pointer, map, slice, func or
// channel.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func goTypeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}

// modelType turns a RegisterOptions model into a type: a reflect.Type as is, any other value
// by its type, nil as nil.
func modelType(m any) reflect.Type {
	switch m := m.(type) {
	case nil:
		return nil
	case reflect.Type:
		return m
	default:
		return reflect.TypeOf(m)
	}
}
