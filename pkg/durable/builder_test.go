package durable

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

type testState struct {
	Name  string   `json:"name" durable:"required"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	Note  *string  `json:"note"`
}

func nodeA(context.Context, testState) (any, error)                   { return nil, nil }
func nodeB(context.Context, testState) (any, error)                   { return Update{"count": 1}, nil }
func routeA(context.Context, testState) (any, error)                  { return nil, nil }
func routeB(context.Context, testState) (any, error)                  { return "__complete__", nil }
func eventA(context.Context, testState, json.RawMessage) (any, error) { return nil, nil }

func TestManifestBuilder_AddNode_ErrorsInSpecOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(b *ManifestBuilder[testState])
		node  string
		fn    NodeFunc[testState]
		opts  []NodeOption
		want  string
	}{
		{"duplicate beats nil handler", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA) }, "a", nil, nil, "duplicate node name 'a'"},
		{"nil handler", nil, "a", nil, nil, "callable cannot be None"},
		{"nil handler beats terminal conflict", nil, "a", nil, []NodeOption{Terminal(), WithNext("b")}, "callable cannot be None"},
		{"handler name taken", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA, WithHandlerName("h")) }, "b", nodeB, []NodeOption{WithHandlerName("h")}, "handler name 'h' already registered to a different callable"},
		{"default handler name taken", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA, WithHandlerName("node:b")) }, "b", nodeB, nil, "handler name 'node:b' already registered to a different callable"},
		{"default route name taken", func(b *ManifestBuilder[testState]) {
			_ = b.AddNode("a", nodeA, WithRoute(routeA), WithRouteName("route:b"))
		}, "b", nodeB, []NodeOption{WithRoute(routeB)}, "route handler name 'route:b' already registered to a different callable"},
		{"handler beats route", func(b *ManifestBuilder[testState]) {
			_ = b.AddNode("a", nodeA, WithHandlerName("h"), WithRoute(routeA), WithRouteName("r"))
		}, "b", nodeB, []NodeOption{WithHandlerName("h"), WithRoute(routeB), WithRouteName("r")}, "handler name 'h' already registered to a different callable"},
		{"route name taken", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA, WithRoute(routeA), WithRouteName("r")) }, "b", nodeB, []NodeOption{WithRoute(routeB), WithRouteName("r")}, "route handler name 'r' already registered to a different callable"},
		{"route beats terminal", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA, WithRoute(routeA), WithRouteName("r")) }, "b", nodeB, []NodeOption{WithRoute(routeB), WithRouteName("r"), Terminal()}, "route handler name 'r' already registered to a different callable"},
		{"terminal with next", nil, "a", nodeA, []NodeOption{Terminal(), WithNext("b")}, "terminal nodes cannot define next_node or route_handler_name"},
		{"terminal with route", nil, "a", nodeA, []NodeOption{Terminal(), WithRoute(routeA)}, "terminal nodes cannot define next_node or route_handler_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewManifestBuilder[testState]("g")
			if tt.setup != nil {
				tt.setup(b)
			}
			err := b.AddNode(tt.node, tt.fn, tt.opts...)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("AddNode error = %v, want %q wrapping ErrInvalidGraph", err, tt.want)
			}
			if _, berr := b.Build(); berr == nil || berr.Error() != tt.want {
				t.Fatalf("Build after failed AddNode = %v, want the same error", berr)
			}
		})
	}
}

func TestManifestBuilder_AddNode_SameCallableSharedNames_Accepted(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	steps := []error{
		b.AddNode("a", nodeA, WithNext("b"), WithRoute(routeA)),
		b.AddNode("b", nodeA, WithRoute(routeA)), // same handler and route for two nodes
		b.AddNode("c", nodeB, WithHandlerName("x"), WithRoute(routeB), WithRouteName(funcName(routeB))),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("AddNode #%d: %v", i, err)
		}
	}
	// Node and route handler names are separate namespaces.
	if err := b.AddNode("d", nodeB, WithHandlerName("shared"), WithRoute(routeA), WithRouteName("shared")); err != nil {
		t.Fatalf("AddNode with a node name equal to a route name: %v", err)
	}
	reg, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// Handler names: the defaults of a and b (one function, two nodes: two names), "x" and
	// "shared"; route names: the defaults of a and b, routeB's funcName and "shared".
	m := reg.Manifest()
	handlers, routes := map[string]bool{}, map[string]bool{}
	for _, n := range m.Nodes {
		handlers[n.HandlerName] = true
		if n.RouteHandlerName != "" {
			routes[n.RouteHandlerName] = true
		}
	}
	if len(handlers) != 4 || len(routes) != 4 {
		t.Fatalf("handler names %v, route names %v; want 4 of each", handlers, routes)
	}
	if n, _ := m.node("a"); n.HandlerName != "node:a" || n.RouteHandlerName != "route:a" || n.NextNode != "b" {
		t.Fatalf("node a = %+v", n)
	}
	if !strings.HasSuffix(funcName(nodeA), "pkg/durable.nodeA") {
		t.Fatalf("funcName(nodeA) = %q, want package path + name", funcName(nodeA))
	}
}

func TestManifestBuilder_AddEventHandler_Errors(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g")
	if err := b.AddEventHandler("approval", eventA); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("approval", eventA); err == nil || err.Error() != "duplicate event handler for event 'approval'" {
		t.Fatalf("duplicate event: %v", err)
	}
	b2 := NewManifestBuilder[testState]("g")
	if err := b2.AddEventHandler("x", nil); err == nil || err.Error() != "callable cannot be None" {
		t.Fatalf("nil event handler: %v", err)
	}
	b3 := NewManifestBuilder[testState]("g")
	_ = b3.AddEventHandler("x", eventA)
	if err := b3.AddEventHandler("x", nil); err == nil || err.Error() != "duplicate event handler for event 'x'" {
		t.Fatalf("duplicate checked before nil: %v", err)
	}
}

func TestManifestBuilder_Build_ErrorsInSpecOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(b *ManifestBuilder[testState])
		want  string
	}{
		{"no entrypoint", func(b *ManifestBuilder[testState]) { _ = b.AddNode("a", nodeA, WithNext("zz")) }, "entrypoint must be set before building the manifest"},
		{"entrypoint not a node", func(b *ManifestBuilder[testState]) {
			b.SetEntrypoint("x")
			_ = b.AddNode("a", nodeA, WithNext("zz"))
		}, "entrypoint must reference a registered node"},
		{"unknown next in add order", func(b *ManifestBuilder[testState]) {
			b.SetEntrypoint("a")
			_ = b.AddNode("b", nodeA, WithNext("nope1"))
			_ = b.AddNode("a", nodeA, WithNext("nope2"))
		}, "node 'b' references unknown next_node 'nope1'"},
		{"unreachable sorted python list", func(b *ManifestBuilder[testState]) {
			b.SetEntrypoint("a")
			_ = b.AddNode("a", nodeA, WithNext("b"))
			_ = b.AddNode("z", nodeA)
			_ = b.AddNode("b", nodeA)
			_ = b.AddNode("orphan", nodeA)
		}, "nodes unreachable from entrypoint 'a': ['orphan', 'z']"},
		{"unreachable python repr quoting", func(b *ManifestBuilder[testState]) {
			b.SetEntrypoint("a")
			_ = b.AddNode("a", nodeA)
			_ = b.AddNode("it's", nodeA)
			_ = b.AddNode("back\\slash", nodeA)
		}, `nodes unreachable from entrypoint 'a': ['back\\slash', "it's"]`},
		{"route after unreachable path", func(b *ManifestBuilder[testState]) {
			b.SetEntrypoint("a")
			_ = b.AddNode("a", nodeA)
			_ = b.AddNode("b", nodeA, WithRoute(routeA))
		}, "nodes unreachable from entrypoint 'a': ['b']"},
		{"metadata not json", func(b *ManifestBuilder[testState]) {
			b.metadata["bad"] = make(chan int)
			b.SetEntrypoint("a")
			_ = b.AddNode("a", nodeA)
		}, "metadata must be JSON serializable: json: unsupported type: chan int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewManifestBuilder[testState]("g")
			tt.setup(b)
			_, err := b.Build()
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("Build error = %v, want %q wrapping ErrInvalidGraph", err, tt.want)
			}
		})
	}
}

func TestManifestBuilder_Build_ReachableRouteMakesAllReachable(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g", WithVersion("2.0"), WithMetadata(map[string]any{"pi": math.Pi}))
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, WithNext("b"))
	_ = b.AddNode("b", nodeA, WithRoute(routeA))
	_ = b.AddNode("island", nodeB)
	_ = b.AddNode("end", nodeB, Terminal())
	reg, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	m := reg.Manifest()
	if m.Version != "2.0" || m.StateModelName != "testState" || len(m.Nodes) != 4 || m.Metadata["pi"] != math.Pi {
		t.Fatalf("manifest = %+v", m)
	}
	if h, _ := m.ComputeHash(); h != m.GraphHash || len(h) != 16 {
		t.Fatalf("GraphHash %q, recomputed %q", m.GraphHash, h)
	}
	if m.EventHandlerNames == nil || len(m.EventHandlerNames) != 0 {
		t.Fatalf("EventHandlerNames = %#v, want empty non-nil", m.EventHandlerNames)
	}
}

func TestManifestBuilder_Build_DefaultsAndIsolation(t *testing.T) {
	t.Parallel()
	md := map[string]any{"k": 1}
	b := NewManifestBuilder[testState]("g", WithMetadata(md))
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, Terminal())
	_ = b.AddEventHandler("z", eventA)
	_ = b.AddEventHandler("m", eventA)
	reg, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	md["k"] = 2
	_ = b.AddNode("b", nodeB)
	m := reg.Manifest()
	if m.Version != DefaultVersion || m.Metadata["k"] != 1 || len(m.Nodes) != 1 {
		t.Fatalf("registration changed after build: %+v", m)
	}
	if strings.Join(m.EventHandlerNames, ",") != "m,z" {
		t.Fatalf("events = %v, want sorted", m.EventHandlerNames)
	}
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("second Build = %v, want unreachable b", err)
	}
}

type notStruct int

type embedded struct{ testState }

type badTag struct {
	A string `json:"a,omitempty"`
}

func TestManifestBuilder_Build_BadStateModel_Error(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func() error
		want  string
	}{
		{"not struct", func() error {
			b := NewManifestBuilder[notStruct]("g")
			b.SetEntrypoint("a")
			_ = b.AddNode("a", func(context.Context, notStruct) (any, error) { return nil, nil })
			_, err := b.Build()
			return err
		}, "state model must be a struct type, got durable.notStruct"},
		{"embedded", func() error {
			b := NewManifestBuilder[embedded]("g")
			b.SetEntrypoint("a")
			_ = b.AddNode("a", func(context.Context, embedded) (any, error) { return nil, nil })
			_, err := b.Build()
			return err
		}, "state model embedded: field testState: embedded fields are not supported"},
		{"omitempty", func() error {
			b := NewManifestBuilder[badTag]("g")
			b.SetEntrypoint("a")
			_ = b.AddNode("a", func(context.Context, badTag) (any, error) { return nil, nil })
			_, err := b.Build()
			return err
		}, `state model badTag: field A: json options "omitempty" are not supported (every field is dumped)`},
	}
	for _, tt := range tests {
		if err := tt.build(); err == nil || err.Error() != tt.want {
			t.Errorf("%s: Build error = %v, want %q", tt.name, err, tt.want)
		}
	}
}
