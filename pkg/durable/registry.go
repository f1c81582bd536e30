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
// Internal graphs. A graph registered with RegisterInternal is internal: the engine runs it
// like any other, but it belongs to funcgraph itself (the platform's background runs), so the
// surfaces facing clients neither start it nor show it or its runs (Internal, Public).
//
// Register at startup; a Registry is nevertheless safe for concurrent use (reads take a read
// lock).
type Registry struct {
	mu       sync.RWMutex
	byKey    map[registryKey]Graph // guarded by mu
	latest   map[string]Graph      // guarded by mu
	versions map[string][]Graph    // registration order per name; guarded by mu
	ordered  []string              // names in first-registration order; guarded by mu
	internal map[string]bool       // names registered with RegisterInternal; guarded by mu
}

type registryKey struct{ name, hash string }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKey: map[registryKey]Graph{}, latest: map[string]Graph{}, versions: map[string][]Graph{}, internal: map[string]bool{}}
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
// '<hash>' is already registered" (ErrGraphExists), and so does a name registered with
// RegisterInternal ("graph '<name>' is already registered as internal").
func (r *Registry) Register(g Graph) error { return r.register(g, false) }

// RegisterInternal adds g as Register does (Previous included) and marks its name internal
// (see Registry): every registration of the name must then be internal. It is for graphs
// funcgraph runs for itself; an app's graphs use Register.
func (r *Registry) RegisterInternal(g Graph) error { return r.register(g, true) }

func (r *Registry) register(g Graph, internal bool) error {
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
	if _, seen := r.versions[m.GraphName]; seen && r.internal[m.GraphName] != internal {
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
	key := registryKey{name, hash}
	r.mu.RLock()
	g, ok := r.byKey[key]
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

// List returns the latest registration of every name that has one, internal graphs included,
// in the order the names were first registered.
func (r *Registry) List() []Graph { return r.list(true) }

// Public returns what List returns without the internal graphs: the graphs clients may see.
func (r *Registry) Public() []Graph { return r.list(false) }

func (r *Registry) list(internal bool) []Graph {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Graph, 0, len(r.ordered))
	for _, name := range r.ordered {
		if g, ok := r.latest[name]; ok && (internal || !r.internal[name]) {
			out = append(out, g)
		}
	}
	return out
}
