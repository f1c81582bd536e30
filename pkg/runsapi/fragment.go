package runsapi

import "github.com/funcgraph/funcgraph/pkg/durable"

// manifestFragment is the public summary of a manifest that the health, graph list and
// openapi endpoints show. Its fields are declared in the wire key order.
type manifestFragment struct {
	// GraphName is the graph name.
	GraphName string `json:"graph_name"`
	// Version is the manifest version.
	Version string `json:"version"`
	// GraphHash is the topology hash.
	GraphHash string `json:"graph_hash"`
	// Entrypoint is the first node.
	Entrypoint string `json:"entrypoint"`
	// StateModelName is the bare state model type name.
	StateModelName string `json:"state_model_name"`
	// Nodes lists node names in add order (never nil).
	Nodes []string `json:"nodes"`
	// Events lists registered event names, sorted (never nil).
	Events []string `json:"events"`
}

// fragmentOf returns the public fragment of m.
func fragmentOf(m durable.GraphManifest) manifestFragment {
	events := make([]string, len(m.EventHandlerNames))
	copy(events, m.EventHandlerNames)
	return manifestFragment{
		GraphName: m.GraphName, Version: m.Version, GraphHash: m.GraphHash,
		Entrypoint: m.Entrypoint, StateModelName: m.StateModelName,
		Nodes: m.NodeNames(), Events: events,
	}
}

// fragments returns the public fragment of every graph reg.Public returns, in the same order.
func fragments(reg *durable.Registry) []manifestFragment {
	graphs := reg.Public()
	out := make([]manifestFragment, len(graphs))
	for i, g := range graphs {
		out[i] = fragmentOf(g.Manifest())
	}
	return out
}
