package durable

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// BuilderOption configures a ManifestBuilder.
type BuilderOption func(*builderOptions)

type builderOptions struct {
	version  string
	metadata map[string]any
	policy   GraphPolicy // WithPolicy (graphpolicy.go)
}

// WithVersion sets the manifest version (default DefaultVersion). It is free-form and enters
// the hash.
func WithVersion(version string) BuilderOption {
	return func(o *builderOptions) { o.version = version }
}

// WithMetadata sets the manifest metadata (default empty). It must encode as JSON and enters
// the hash: integers and floats hash differently (1 vs 1.0; parity: docs/lineage.md).
func WithMetadata(metadata map[string]any) BuilderOption {
	return func(o *builderOptions) { o.metadata = metadata }
}

// NodeOption configures one AddNode call.
type NodeOption func(*nodeOptions)

type nodeOptions struct {
	next  string
	route any // RouteFunc[S] of the builder's S, or nil
	// routeIdentity is the user's function behind a typed route adapter (WithDecide), or nil.
	routeIdentity any
	routeName     string
	handlerName   string
	terminal      bool
	// Per-node policies (nodepolicy.go).
	retry       *RetryPolicy
	timeout     time.Duration
	failureNode string
}

// WithNext sets the node's static next node. With a route handler it is the fallback used when
// the route returns nothing.
func WithNext(node string) NodeOption {
	return func(o *nodeOptions) { o.next = node }
}

// WithRouteName names the node's route handler explicitly (it enters the hash).
func WithRouteName(name string) NodeOption {
	return func(o *nodeOptions) { o.routeName = name }
}

// WithHandlerName names the node handler explicitly (it enters the hash). Passing a Python
// handler's module.qualname (e.g. "examples.data_pipeline.graph.extract") reproduces the hash
// the Python package computes (parity: docs/lineage.md).
func WithHandlerName(name string) NodeOption {
	return func(o *nodeOptions) { o.handlerName = name }
}

// Terminal marks the node terminal: its visit completes the run. A terminal node cannot have a
// next node or a route handler.
func Terminal() NodeOption {
	return func(o *nodeOptions) { o.terminal = true }
}

// ManifestBuilder describes a graph over the state model S and compiles it with Build. S must
// be a named struct; see the package documentation of the state model rules. A builder is not
// safe for concurrent use.
type ManifestBuilder[S any] struct {
	graphName  string
	version    string
	metadata   map[string]any
	entrypoint string

	nodes         []NodeDefinition
	nodeIndex     map[string]int
	nodeFuncs     map[string]NodeFunc[S] // by node name
	routeFuncs    map[string]RouteFunc[S]
	eventHandlers map[string]EventFunc[S]
	eventChecks   map[string]func(json.RawMessage) error // typed payload checks, by event (OnEvent)
	eventPayloads map[string]EventPayload                // typed payload types, by event (OnEvent)
	reducers      map[string]Reducer                     // by state field (Reduce); nil: none
	searchKeys    []string                               // state fields that index a run (SearchKeys)
	// nodeIdentity and routeIdentity hold the code pointer of the user's function behind each
	// handler name (the adapter's for typed forms is not the user's).
	nodeIdentity  map[string]uintptr
	routeIdentity map[string]uintptr
	policies      map[string]NodePolicy // by node name, only nodes with a policy (nodepolicy.go)
	policy        GraphPolicy           // the graph's guards (WithPolicy)

	schemaOnce sync.Once // reflects S for the typed adapters
	schema     *stateSchema
	schemaErr  error

	err error // first AddNode / AddEventHandler error, reported again by Build
}

// NewManifestBuilder starts a graph named graphName over the state model S.
func NewManifestBuilder[S any](graphName string, opts ...BuilderOption) *ManifestBuilder[S] {
	o := builderOptions{version: DefaultVersion}
	for _, opt := range opts {
		opt(&o)
	}
	md := map[string]any{}
	maps.Copy(md, o.metadata)
	return &ManifestBuilder[S]{
		graphName: graphName, version: o.version, metadata: md, policy: o.policy,
		nodeIndex: map[string]int{}, nodeFuncs: map[string]NodeFunc[S]{}, routeFuncs: map[string]RouteFunc[S]{},
		eventHandlers: map[string]EventFunc[S]{}, eventChecks: map[string]func(json.RawMessage) error{}, nodeIdentity: map[string]uintptr{}, routeIdentity: map[string]uintptr{},
		policies: map[string]NodePolicy{},
	}
}

// SetEntrypoint sets the first node. The node may be added later; Build checks it.
func (b *ManifestBuilder[S]) SetEntrypoint(name string) {
	b.entrypoint = name
}

func (b *ManifestBuilder[S]) fail(msg string) error {
	err := newError(ErrInvalidGraph, msg)
	if b.err == nil {
		b.err = err
	}
	return err
}

// addNode is AddNode; identity, when set, is the user's function behind a typed adapter.
func (b *ManifestBuilder[S]) addNode(name string, handler NodeFunc[S], identity any, opts ...NodeOption) error {
	var o nodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if _, dup := b.nodeIndex[name]; dup {
		return b.fail(fmt.Sprintf("duplicate node name '%s'", name))
	}
	if handler == nil {
		return b.fail("callable cannot be None")
	}
	var route RouteFunc[S]
	if o.route != nil {
		r, ok := o.route.(RouteFunc[S])
		if !ok {
			return b.fail(fmt.Sprintf("route handler of node '%s' is a %T, want a RouteFunc over %s", name, o.route, reflect.TypeFor[S]()))
		}
		route = r
	}
	var userFn any = handler
	if t, ok := identity.(typedHandler); ok {
		userFn = t.fn
	}
	handlerName := o.handlerName
	if handlerName == "" {
		handlerName = defaultHandlerName(name)
	}
	if prev, ok := b.nodeIdentity[handlerName]; ok && prev != funcPointer(userFn) {
		return b.fail(fmt.Sprintf("handler name '%s' already registered to a different callable", handlerName))
	}
	routeName := ""
	var routeFn any = route
	if o.routeIdentity != nil {
		routeFn = o.routeIdentity
	}
	if route != nil {
		routeName = o.routeName
		if routeName == "" {
			routeName = defaultRouteName(name)
		}
		if prev, ok := b.routeIdentity[routeName]; ok && prev != funcPointer(routeFn) {
			return b.fail(fmt.Sprintf("route handler name '%s' already registered to a different callable", routeName))
		}
	}
	if o.terminal && (o.next != "" || route != nil) {
		return b.fail("terminal nodes cannot define next_node or route_handler_name")
	}
	if msg := checkNodePolicy(name, &o); msg != "" {
		return b.fail(msg)
	}
	b.nodeIndex[name] = len(b.nodes)
	b.nodes = append(b.nodes, NodeDefinition{
		Name: name, HandlerName: handlerName, NextNode: o.next, RouteHandlerName: routeName, Terminal: o.terminal,
		FailureNode: o.failureNode,
	})
	if p, ok := nodePolicyOf(&o); ok {
		b.policies[name] = p
	}
	b.nodeFuncs[name] = handler
	b.nodeIdentity[handlerName] = funcPointer(userFn)
	if route != nil {
		b.routeFuncs[name] = route
		b.routeIdentity[routeName] = funcPointer(routeFn)
	}
	return nil
}

// addEventHandler registers handler for eventName (AddEventHandler, OnEvent).
func (b *ManifestBuilder[S]) addEventHandler(eventName string, handler EventFunc[S]) error {
	if _, dup := b.eventHandlers[eventName]; dup {
		return b.fail(fmt.Sprintf("duplicate event handler for event '%s'", eventName))
	}
	if handler == nil {
		return b.fail("callable cannot be None")
	}
	b.eventHandlers[eventName] = handler
	return nil
}

// Build validates the graph and compiles it. Besides the first AddNode/AddEventHandler error
// and state model errors, it checks in order (errors wrap ErrInvalidGraph):
// "entrypoint must be set before building the manifest",
// "entrypoint must reference a registered node",
// "node '<name>' references unknown next_node '<next>'" (nodes in add order),
// "node '<name>' references unknown failure_node '<node>'" (WithFailureRoute),
// "nodes unreachable from entrypoint '<entry>': ['<a>', '<b>']" (skipped when a reachable
// node has a route handler; failure routes count as edges), the checks of WithPolicy, and that
// the metadata encodes as JSON. Then it computes the graph hash. The builder stays usable; later changes do not affect
// the registration.
func (b *ManifestBuilder[S]) Build() (GraphRegistration[S], error) {
	if b.err != nil {
		return GraphRegistration[S]{}, b.err
	}
	schema, err := newStateSchema(reflect.TypeFor[S]())
	if err != nil {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, err.Error())
	}
	if b.entrypoint == "" {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, "entrypoint must be set before building the manifest")
	}
	if _, ok := b.nodeIndex[b.entrypoint]; !ok {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, "entrypoint must reference a registered node")
	}
	for _, n := range b.nodes {
		if _, ok := b.nodeIndex[n.NextNode]; n.NextNode != "" && !ok {
			return GraphRegistration[S]{}, newError(ErrInvalidGraph, fmt.Sprintf("node '%s' references unknown next_node '%s'", n.Name, n.NextNode))
		}
	}
	for _, n := range b.nodes {
		if _, ok := b.nodeIndex[n.FailureNode]; n.FailureNode != "" && !ok {
			return GraphRegistration[S]{}, newError(ErrInvalidGraph, fmt.Sprintf("node '%s' references unknown failure_node '%s'", n.Name, n.FailureNode))
		}
	}
	if unreachable := b.unreachable(); len(unreachable) > 0 {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, fmt.Sprintf("nodes unreachable from entrypoint '%s': %s", b.entrypoint, pyjson.ReprList(unreachable)))
	}
	if msg := b.checkPolicy(); msg != "" {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, msg)
	}
	if _, err := appendCanonicalMap(nil, b.metadata, 0); err != nil {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, "metadata must be JSON serializable: "+err.Error())
	}

	events := slices.Sorted(maps.Keys(b.eventHandlers))
	if events == nil {
		events = []string{}
	}
	m := GraphManifest{
		GraphName: b.graphName, Version: b.version, StateModelName: schema.name, Entrypoint: b.entrypoint,
		Nodes: slices.Clone(b.nodes), EventHandlerNames: events, Metadata: maps.Clone(b.metadata),
		index: maps.Clone(b.nodeIndex), Reducers: reducerNames(b.reducers), SearchKeys: slices.Clone(b.searchKeys),
	}
	canon, err := m.CanonicalTopology()
	if err != nil {
		return GraphRegistration[S]{}, newError(ErrInvalidGraph, "compute graph hash: "+err.Error())
	}
	m.GraphHash = hashCanonical(canon)
	g := newGraphRegistration(m, schema, b.nodeFuncs, b.routeFuncs, b.eventHandlers)
	g.r.policies = maps.Clone(b.policies)
	g.r.eventChecks = maps.Clone(b.eventChecks)
	g.r.eventPayloads = maps.Clone(b.eventPayloads)
	g.r.reducers = maps.Clone(b.reducers)
	g.r.policy = b.policy
	return g, nil
}

// unreachable returns the sorted names of nodes not reachable from the entrypoint along
// next_node and failure_node edges, or nil when any reachable node has a route handler
// (targets are dynamic).
func (b *ManifestBuilder[S]) unreachable() []string {
	seen := make([]bool, len(b.nodes))
	queue := []int{b.nodeIndex[b.entrypoint]}
	seen[queue[0]] = true
	for len(queue) > 0 {
		n := b.nodes[queue[0]]
		queue = queue[1:]
		if n.RouteHandlerName != "" {
			return nil
		}
		for _, next := range [...]string{n.NextNode, n.FailureNode} {
			if i, ok := b.nodeIndex[next]; ok && !seen[i] {
				seen[i] = true
				queue = append(queue, i)
			}
		}
	}
	var out []string
	for i, n := range b.nodes {
		if !seen[i] {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}
