package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Graph is the type-erased form of a GraphRegistration that the engine executes, one step at
// a time. State is always a JSON object. Implementations are safe for concurrent use; the
// handlers they call must be too.
type Graph interface {
	// Manifest returns the graph's manifest by value. Its Nodes, EventHandlerNames and Metadata
	// are shared with the graph and must not be modified.
	Manifest() GraphManifest
	// ExecuteNode validates state against the model, runs the node's handler, merges the result
	// and returns the full new state (every model field, in declaration
	// order). Errors: "unknown node '<n>' in graph '<g>'" (ErrUnknownNode), a *StateError
	// (ErrInvalidState), "unsupported state merge result: <type>" (ErrUnsupportedResult), or
	// the handler's error as a *HandlerError whose message is the handler's.
	ExecuteNode(ctx context.Context, node string, state json.RawMessage) (json.RawMessage, error)
	// ResolveRoute resolves the route of the node just executed (terminal → complete,
	// route handler normalisation, static next, implicit completion) and validates targets:
	// "route decision references unknown node '<x>' in graph '<g>'" and
	// "route decision references unknown resume_node '<x>' in graph '<g>'" (ErrUnknownNode),
	// and for ActionChild "child run into references unknown state field '<f>' of graph '<g>'"
	// (ErrInvalidRouteDecision).
	// Other errors: ErrInvalidRouteDecision, "unsupported route decision: <type>"
	// (ErrUnsupportedResult), *StateError, *HandlerError. The state is decoded only when a
	// route handler runs.
	ResolveRoute(ctx context.Context, node string, state json.RawMessage) (RouteDecision, error)
	// ApplyEvent runs the event handler registered for event on (state, payload) and merges
	// the result. payload is the raw event body (any JSON, possibly "null"; empty means null).
	// Unknown event → "unknown event handler '<event>'" (ErrUnknownEvent); other errors as for
	// ExecuteNode.
	ApplyEvent(ctx context.Context, event string, state json.RawMessage, payload json.RawMessage) (json.RawMessage, error)
}

// GraphRegistration is a compiled graph over the state model S, made by
// ManifestBuilder.Build. It implements Graph with value receivers, so both
// GraphRegistration[S] and *GraphRegistration[S] are Graphs; copies share the compiled graph,
// which is immutable and safe for concurrent use. The zero value is not usable.
type GraphRegistration[S any] struct {
	r *registration[S]
}

type registration[S any] struct {
	manifest      GraphManifest
	schema        *stateSchema
	nodes         map[string]*compiledNode[S]
	eventHandlers map[string]EventFunc[S]
	eventChecks   map[string]func(json.RawMessage) error
	eventPayloads map[string]EventPayload
	policies      map[string]NodePolicy // by node name (nodepolicy.go)
	reducers      map[string]Reducer    // by state field (ManifestBuilder.Reduce)
	policy        GraphPolicy           // the graph's guards (WithPolicy)
}

type compiledNode[S any] struct {
	def     NodeDefinition
	handler NodeFunc[S]
	route   RouteFunc[S]
}

var errNotBuilt = errors.New("durable: graph registration not built (zero value)")

func newGraphRegistration[S any](m GraphManifest, schema *stateSchema,
	nodeFuncs map[string]NodeFunc[S], routeFuncs map[string]RouteFunc[S],
	events map[string]EventFunc[S],
) GraphRegistration[S] {
	r := &registration[S]{
		manifest: m, schema: schema, nodes: make(map[string]*compiledNode[S], len(m.Nodes)),
		eventHandlers: maps.Clone(events),
	}
	for _, n := range m.Nodes {
		r.nodes[n.Name] = &compiledNode[S]{def: n, handler: nodeFuncs[n.Name], route: routeFuncs[n.Name]}
	}
	return GraphRegistration[S]{r: r}
}

// Manifest returns the manifest (see Graph.Manifest).
func (g GraphRegistration[S]) Manifest() GraphManifest {
	if g.r == nil {
		return GraphManifest{}
	}
	return g.r.manifest
}

// StateType returns the state model type S.
func (g GraphRegistration[S]) StateType() reflect.Type { return reflect.TypeFor[S]() }

// DecodeState validates a JSON state object against the model.
func (g GraphRegistration[S]) DecodeState(state json.RawMessage) (S, error) {
	var s S
	if g.r == nil {
		return s, errNotBuilt
	}
	err := g.r.schema.decode(state, &s)
	return s, err
}

// EncodeState dumps s with every model field in declaration order, nil slices and maps as
// empty. It runs the model's Validate.
func (g GraphRegistration[S]) EncodeState(s S) (json.RawMessage, error) {
	if g.r == nil {
		return nil, errNotBuilt
	}
	if err := g.r.schema.finish(reflect.ValueOf(&s).Elem(), &s); err != nil {
		return nil, err
	}
	return g.r.schema.dump(&s)
}

func (r *registration[S]) node(name string) (*compiledNode[S], error) {
	n, ok := r.nodes[name]
	if !ok {
		return nil, newError(ErrUnknownNode, fmt.Sprintf("unknown node '%s' in graph '%s'", name, r.manifest.GraphName))
	}
	return n, nil
}

// recoverHandler turns a handler panic into a HandlerError so one bad handler cannot take the
// engine down (graphrun.RecoverHandler for callers outside the package).
func recoverHandler(kind, name string, err *error) {
	if p := recover(); p != nil {
		*err = handlerPanic(kind, name, p)
	}
}

// handlerPanic returns the error a handler panic with p becomes.
func handlerPanic(kind, name string, p any) error {
	return &HandlerError{Kind: kind, Name: name, Err: fmt.Errorf("%s handler panicked: %v", kind, p)}
}

// ExecuteNode implements Graph.
func (g GraphRegistration[S]) ExecuteNode(ctx context.Context, node string, state json.RawMessage) (json.RawMessage, error) {
	if g.r == nil {
		return nil, errNotBuilt
	}
	n, err := g.r.node(node)
	if err != nil {
		return nil, err
	}
	var s S
	if err := g.r.schema.decode(state, &s); err != nil {
		return nil, err
	}
	result, err := callNode(ctx, n, s)
	if err != nil {
		return nil, err
	}
	if err := g.r.schema.merge(reflect.ValueOf(&s).Elem(), &s, result); err != nil {
		return nil, err
	}
	return g.r.schema.dump(&s)
}

func callNode[S any](ctx context.Context, n *compiledNode[S], s S) (result any, err error) {
	defer recoverHandler("node", n.def.Name, &err)
	result, err = n.handler(ctx, s)
	if err != nil {
		return nil, &HandlerError{Kind: "node", Name: n.def.Name, Err: err}
	}
	return result, nil
}

// ResolveRoute implements Graph.
func (g GraphRegistration[S]) ResolveRoute(ctx context.Context, node string, state json.RawMessage) (RouteDecision, error) {
	if g.r == nil {
		return RouteDecision{}, errNotBuilt
	}
	n, err := g.r.node(node)
	if err != nil {
		return RouteDecision{}, err
	}
	var d RouteDecision
	switch {
	case n.def.Terminal:
		return Complete(""), nil
	case n.route != nil:
		var s S
		if err := g.r.schema.decode(state, &s); err != nil {
			return RouteDecision{}, err
		}
		result, err := callRoute(ctx, n, s)
		if err != nil {
			return RouteDecision{}, err
		}
		if d, err = normalizeRouteResult(result, n.def); err != nil {
			return RouteDecision{}, err
		}
		if d, err = g.r.encodeContinue(d); err != nil { // continue.go
			return RouteDecision{}, err
		}
	case n.def.NextNode != "":
		d = Next(n.def.NextNode)
	default:
		return Complete("implicit completion: no outgoing edge"), nil
	}
	return d, g.r.checkTargets(d)
}

func callRoute[S any](ctx context.Context, n *compiledNode[S], s S) (result any, err error) {
	defer recoverHandler("route", n.def.Name, &err)
	result, err = n.route(ctx, s)
	if err != nil {
		return nil, &HandlerError{Kind: "route", Name: n.def.Name, Err: err}
	}
	return result, nil
}

// checkTargets verifies that a decision's node references exist in the manifest.
func (r *registration[S]) checkTargets(d RouteDecision) error {
	switch d.Action {
	case ActionNext, ActionSleep:
		if _, ok := r.nodes[d.NextNode]; !ok {
			return newError(ErrUnknownNode, fmt.Sprintf("route decision references unknown node '%s' in graph '%s'", d.NextNode, r.manifest.GraphName))
		}
	case ActionWaitForEvent:
		if _, ok := r.nodes[d.ResumeNode]; !ok {
			return newError(ErrUnknownNode, fmt.Sprintf("route decision references unknown resume_node '%s' in graph '%s'", d.ResumeNode, r.manifest.GraphName))
		}
		if _, ok := r.nodes[d.TimeoutNode]; d.TimeoutNode != "" && !ok {
			return newError(ErrUnknownNode, fmt.Sprintf("route decision references unknown timeout_node '%s' in graph '%s'", d.TimeoutNode, r.manifest.GraphName))
		}
	case ActionParallel:
		return r.checkParallelTargets(d)
	case ActionChild:
		return r.checkChild(d)
	}
	return nil
}

// ApplyEvent implements Graph.
func (g GraphRegistration[S]) ApplyEvent(ctx context.Context, event string, state json.RawMessage, payload json.RawMessage) (json.RawMessage, error) {
	if g.r == nil {
		return nil, errNotBuilt
	}
	h, ok := g.r.eventHandlers[event]
	if !ok {
		return nil, newError(ErrUnknownEvent, fmt.Sprintf("unknown event handler '%s'", event))
	}
	var s S
	if err := g.r.schema.decode(state, &s); err != nil {
		return nil, err
	}
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	result, err := callEvent(ctx, event, h, s, payload)
	if err != nil {
		return nil, err
	}
	if err := g.r.schema.merge(reflect.ValueOf(&s).Elem(), &s, result); err != nil {
		return nil, err
	}
	return g.r.schema.dump(&s)
}

func callEvent[S any](ctx context.Context, event string, h EventFunc[S], s S, payload json.RawMessage) (result any, err error) {
	defer recoverHandler("event", event, &err)
	result, err = h(ctx, s, payload)
	if err != nil {
		return nil, &HandlerError{Kind: "event", Name: event, Err: err}
	}
	return result, nil
}

var (
	_ Graph = GraphRegistration[struct{}]{}
	_ Graph = (*GraphRegistration[struct{}])(nil)
)

// compiledGraph is implemented by every GraphRegistration: it hands graphrun.Of the compiled
// graph, whose methods are the optional capabilities the engine asks for (graphrun.Joiner,
// graphrun.StateChecker, graphrun.EventChecker, graphrun.ChildOutputSetter,
// graphrun.NodePolicies, graphrun.EventPayloadTyper).
type compiledGraph interface{ compiled() any }

// compiled returns the compiled graph: a nil *registration[S] for the zero value, whose
// capabilities answer errNotBuilt or nothing.
func (g GraphRegistration[S]) compiled() any { return g.r }

func init() {
	graphrun.Install(graphrun.Model{
		Capabilities: func(g any) any {
			if c, ok := g.(compiledGraph); ok {
				return c.compiled()
			}
			return nil
		},
		Join: func(base json.RawMessage, results []graphrun.BranchResult) (json.RawMessage, error) {
			return joinBranches(base, results, nil)
		},
		StateUpdate:  stateUpdate,
		HandlerPanic: handlerPanic,
	})
}
