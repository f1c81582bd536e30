package durable

import (
	"fmt"
	"sync"
)

// Registry holds registered graphs by (name, hash): every version a process can run.
//
// Versions. Several versions of one graph (one name, different hashes) are registered side by
// side. The rule for new runs is explicit: the latest of a name is the graph most recently
// passed to Register as itself; a graph passed wrapped in Previous is kept for the runs
// pinned to it and never becomes the latest, whatever the order of the calls. Latest (new
// runs, health, openapi.json) returns the latest; Lookup resolves any registered version by
// its hash, so a run started on an older version keeps running on it. A name registered only
// through Previous starts no new runs (Latest reports it unknown) while its runs finish.
//
// Register at startup; a Registry is nevertheless safe for concurrent use (reads take a read
// lock).
type Registry struct {
	mu       sync.RWMutex
	byKey    map[registryKey]Graph // guarded by mu
	latest   map[string]Graph      // guarded by mu
	versions map[string][]Graph    // registration order per name; guarded by mu
	ordered  []string              // names in first-registration order; guarded by mu
}

type registryKey struct{ name, hash string }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKey: map[registryKey]Graph{}, latest: map[string]Graph{}, versions: map[string][]Graph{}}
}

// previous marks a graph registered for the runs pinned to it (Previous).
type previous struct{ Graph }

// Previous marks g as an earlier version of its graph for Register: g is registered so the
// runs pinned to its hash keep running on it, but it never becomes the version new runs
// start on. Use it to keep the old version of a changed graph deployed until its runs have
// finished, e.g. reg.Register(durable.Previous(v1)) next to reg.Register(v2), or in a list of
// graphs handed to a launcher. Previous of a nil graph is nil.
func Previous(g Graph) Graph {
	if g == nil {
		return nil
	}
	if p, ok := g.(previous); ok {
		return p
	}
	return previous{g}
}

// Register adds g. A graph passed as itself becomes the latest registration of its name (new
// runs start on it); one wrapped in Previous is only resolvable by its hash (Lookup).
// Registering an already registered (name, hash) fails with "graph '<name>' with hash
// '<hash>' is already registered" (ErrGraphExists).
func (r *Registry) Register(g Graph) error {
	p, old := g.(previous)
	if old {
		g = p.Graph
	}
	m := g.Manifest()
	key := registryKey{m.GraphName, m.GraphHash}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[key]; dup {
		return newError(ErrGraphExists, fmt.Sprintf("graph '%s' with hash '%s' is already registered", m.GraphName, m.GraphHash))
	}
	r.byKey[key] = g
	if _, seen := r.versions[m.GraphName]; !seen {
		r.ordered = append(r.ordered, m.GraphName)
	}
	r.versions[m.GraphName] = append(r.versions[m.GraphName], g)
	if !old {
		r.latest[m.GraphName] = g
	}
	return nil
}

// Latest returns the latest registration of name (see Registry), or "unknown graph '<name>'"
// (ErrUnknownGraph) when the name has none.
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

// Versions returns every registered version of name: the latest first (when there is one),
// then the others in registration order. It is empty for an unknown name.
func (r *Registry) Versions(name string) []Graph {
	r.mu.RLock()
	defer r.mu.RUnlock()
	all := r.versions[name]
	out := make([]Graph, 0, len(all))
	latest, ok := r.latest[name]
	if ok {
		out = append(out, latest)
	}
	for _, g := range all {
		if !ok || g.Manifest().GraphHash != latest.Manifest().GraphHash {
			out = append(out, g)
		}
	}
	return out
}

// List returns the latest registration of every name that has one, in the order the names
// were first registered.
func (r *Registry) List() []Graph {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Graph, 0, len(r.ordered))
	for _, name := range r.ordered {
		if g, ok := r.latest[name]; ok {
			out = append(out, g)
		}
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
