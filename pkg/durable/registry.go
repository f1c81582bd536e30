package durable

import (
	"fmt"
	"sync"
)

// Registry holds registered graphs by (name, hash). The newest registration of a name is its
// "latest" (used to start runs, for health and openapi.json); every registered hash stays
// resolvable with Lookup so in-flight runs keep their version. Register at startup; a Registry
// is nevertheless safe for concurrent use (reads take a read lock).
//
// A graph registered with RegisterInternal is internal: the engine runs it like any other,
// but it belongs to funcgraph itself (the platform's background runs), so the surfaces facing
// clients neither start it nor show it or its runs (Internal, Public).
type Registry struct {
	mu       sync.RWMutex
	byKey    map[registryKey]Graph // guarded by mu
	latest   map[string]Graph      // guarded by mu
	ordered  []string              // names in first-registration order; guarded by mu
	internal map[string]bool       // names registered with RegisterInternal; guarded by mu
}

type registryKey struct{ name, hash string }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKey: map[registryKey]Graph{}, latest: map[string]Graph{}, internal: map[string]bool{}}
}

// Register adds g and makes it the latest registration of its name. Registering an already
// registered (name, hash) fails with "graph '<name>' with hash '<hash>' is already registered"
// (ErrGraphExists), and so does a name registered with RegisterInternal ("graph '<name>' is
// already registered as internal").
func (r *Registry) Register(g Graph) error { return r.register(g, false) }

// RegisterInternal adds g as Register does and marks its name internal (see Registry): every
// registration of the name must then be internal. It is for graphs funcgraph runs for itself;
// an app's graphs use Register.
func (r *Registry) RegisterInternal(g Graph) error { return r.register(g, true) }

func (r *Registry) register(g Graph, internal bool) error {
	m := g.Manifest()
	key := registryKey{m.GraphName, m.GraphHash}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[key]; dup {
		return newError(ErrGraphExists, fmt.Sprintf("graph '%s' with hash '%s' is already registered", m.GraphName, m.GraphHash))
	}
	if _, seen := r.latest[m.GraphName]; seen && r.internal[m.GraphName] != internal {
		kind := "public"
		if r.internal[m.GraphName] {
			kind = "internal"
		}
		return newError(ErrGraphExists, fmt.Sprintf("graph '%s' is already registered as %s", m.GraphName, kind))
	}
	if internal {
		r.internal[m.GraphName] = true
	}
	r.byKey[key] = g
	if _, seen := r.latest[m.GraphName]; !seen {
		r.ordered = append(r.ordered, m.GraphName)
	}
	r.latest[m.GraphName] = g
	return nil
}

// Latest returns the newest registration of name, or "unknown graph '<name>'"
// (ErrUnknownGraph).
func (r *Registry) Latest(name string) (Graph, error) {
	r.mu.RLock()
	g, ok := r.latest[name]
	r.mu.RUnlock()
	if !ok {
		return nil, newError(ErrUnknownGraph, fmt.Sprintf("unknown graph '%s'", name))
	}
	return g, nil
}

// Lookup returns the registration of (name, hash), or "unknown graph '<name>' with hash
// '<hash>'" (ErrUnknownGraph).
func (r *Registry) Lookup(name, hash string) (Graph, error) {
	r.mu.RLock()
	g, ok := r.byKey[registryKey{name, hash}]
	r.mu.RUnlock()
	if !ok {
		return nil, newError(ErrUnknownGraph, fmt.Sprintf("unknown graph '%s' with hash '%s'", name, hash))
	}
	return g, nil
}

// Internal reports whether name was registered with RegisterInternal.
func (r *Registry) Internal(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.internal[name]
}

// HasInternal reports whether any graph was registered with RegisterInternal.
func (r *Registry) HasInternal() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.internal) > 0
}

// List returns the latest registration of every name, internal graphs included, in the order
// the names were first registered.
func (r *Registry) List() []Graph { return r.list(true) }

// Public returns what List returns without the internal graphs: the graphs clients may see.
func (r *Registry) Public() []Graph { return r.list(false) }

func (r *Registry) list(internal bool) []Graph {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Graph, 0, len(r.ordered))
	for _, name := range r.ordered {
		if internal || !r.internal[name] {
			out = append(out, r.latest[name])
		}
	}
	return out
}

// Fragments returns the public fragment of every graph Public returns, in the same order.
func (r *Registry) Fragments() []ManifestFragment {
	graphs := r.Public()
	out := make([]ManifestFragment, len(graphs))
	for i, g := range graphs {
		out[i] = g.Manifest().Fragment()
	}
	return out
}
