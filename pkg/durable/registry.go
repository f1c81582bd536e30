package durable

import (
	"fmt"
	"sync"
)

// Registry holds registered graphs by (name, hash). The newest registration of a name is its
// "latest" (used to start runs, for health and openapi.json); every registered hash stays
// resolvable with Lookup so in-flight runs keep their version. Register at startup; a Registry
// is nevertheless safe for concurrent use (reads take a read lock).
type Registry struct {
	mu      sync.RWMutex
	byKey   map[registryKey]Graph // guarded by mu
	latest  map[string]Graph      // guarded by mu
	ordered []string              // names in first-registration order; guarded by mu
}

type registryKey struct{ name, hash string }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKey: map[registryKey]Graph{}, latest: map[string]Graph{}}
}

// Register adds g and makes it the latest registration of its name. Registering an already
// registered (name, hash) fails with "graph '<name>' with hash '<hash>' is already registered"
// (ErrGraphExists).
func (r *Registry) Register(g Graph) error {
	m := g.Manifest()
	key := registryKey{m.GraphName, m.GraphHash}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[key]; dup {
		return newError(ErrGraphExists, fmt.Sprintf("graph '%s' with hash '%s' is already registered", m.GraphName, m.GraphHash))
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

// List returns the latest registration of every name, in the order the names were first
// registered.
func (r *Registry) List() []Graph {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Graph, len(r.ordered))
	for i, name := range r.ordered {
		out[i] = r.latest[name]
	}
	return out
}

// Fragments returns the public fragment of every graph List returns, in the same order.
func (r *Registry) Fragments() []ManifestFragment {
	graphs := r.List()
	out := make([]ManifestFragment, len(graphs))
	for i, g := range graphs {
		out[i] = g.Manifest().Fragment()
	}
	return out
}
