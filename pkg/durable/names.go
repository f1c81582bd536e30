package durable

// Default handler names. A node handler given no name (WithHandlerName) is named
// "node:<node name>", a route handler given none (WithRouteName) "route:<node name>". The names
// depend on the node name only, never on the Go function: a graph hashes the same under
// `go test` (where package main is compiled under its import path) and in any binary, and
// renaming or moving a function is not a new version. Two nodes may share one function; each
// gets its own default name. An explicit name equal to another node's default name, bound to a
// different function, fails AddNode as any taken name does.
//
// Graphs built before these defaults were named after the Go function (its package path and
// name as the runtime reports it, e.g. "github.com/acme/app/graphs.extract"). Build also
// computes the hash such a graph had (GraphManifest.LegacyGraphHash), and a Registry resolves
// it to the graph (Registry.Lookup), so that runs pinned to the old hash keep running after the
// upgrade with no change to the code.
const (
	defaultHandlerPrefix = "node:"
	defaultRoutePrefix   = "route:"
)

func defaultHandlerName(node string) string { return defaultHandlerPrefix + node }
func defaultRouteName(node string) string   { return defaultRoutePrefix + node }

// legacyNames are the names a node had when defaults were the Go function's name.
type legacyNames struct{ handler, route string }

// LegacyGraphHash returns the hash the graph had when default handler names were the Go
// function's name (releases before node-derived names), when it differs from GraphHash; ""
// when every handler is named explicitly (the hashes are equal) or the manifest was decoded
// rather than built. A Registry resolves it to this graph (Registry.Lookup) without listing it
// as a version of its own.
func (m GraphManifest) LegacyGraphHash() string { return m.legacyHash }

// legacyHash returns the hash of m with each node's handler and route names as the Go function
// defaults named them, or "" when it equals m's hash.
func (b *ManifestBuilder[S]) legacyHash(m GraphManifest) (string, error) {
	old := m
	old.Nodes = make([]NodeDefinition, len(m.Nodes))
	for i, n := range m.Nodes {
		l := b.legacy[n.Name]
		n.HandlerName, n.RouteHandlerName = l.handler, l.route
		old.Nodes[i] = n
	}
	canon, err := old.CanonicalTopology()
	if err != nil {
		return "", err
	}
	if h := hashCanonical(canon); h != m.GraphHash {
		return h, nil
	}
	return "", nil
}
