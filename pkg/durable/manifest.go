package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultVersion is the manifest version used when the builder is given none.
const DefaultVersion = "0.1.0"

// NodeDefinition describes one node of a graph. Empty NextNode and RouteHandlerName mean "none"
// and are written as JSON null.
type NodeDefinition struct {
	// Name is the node name, unique within the graph.
	Name string `json:"name"`
	// HandlerName identifies the node handler; it enters the graph hash.
	HandlerName string `json:"handler_name"`
	// NextNode is the static successor, or empty. With a route handler it is the fallback used
	// when the route returns nothing.
	NextNode string `json:"next_node"`
	// RouteHandlerName identifies the route handler, or is empty; it enters the graph hash.
	RouteHandlerName string `json:"route_handler_name"`
	// Terminal marks a node whose visit completes the run.
	Terminal bool `json:"terminal"`
	// FailureNode is where the run continues when the node's handler fails for good
	// (WithFailureRoute), or empty. It enters the graph hash only when set, and its JSON key
	// failure_node is written only then.
	FailureNode string `json:"failure_node,omitempty"`
}

// nodeDefinitionWire is the JSON shape of NodeDefinition with nullable strings.
type nodeDefinitionWire struct {
	Name             string  `json:"name"`
	HandlerName      string  `json:"handler_name"`
	NextNode         *string `json:"next_node"`
	RouteHandlerName *string `json:"route_handler_name"`
	Terminal         bool    `json:"terminal"`
	FailureNode      string  `json:"failure_node,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// MarshalJSON writes the node with next_node and route_handler_name as null when empty, and
// failure_node only when set.
func (n NodeDefinition) MarshalJSON() ([]byte, error) {
	return json.Marshal(nodeDefinitionWire{
		Name: n.Name, HandlerName: n.HandlerName, NextNode: nullable(n.NextNode),
		RouteHandlerName: nullable(n.RouteHandlerName), Terminal: n.Terminal, FailureNode: n.FailureNode,
	})
}

// UnmarshalJSON reads a node written by MarshalJSON (null and absent strings become empty).
func (n *NodeDefinition) UnmarshalJSON(data []byte) error {
	var w nodeDefinitionWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*n = NodeDefinition{
		Name: w.Name, HandlerName: w.HandlerName, NextNode: deref(w.NextNode),
		RouteHandlerName: deref(w.RouteHandlerName), Terminal: w.Terminal, FailureNode: w.FailureNode,
	}
	return nil
}

// nodeTable is the ordered node table of a manifest, in add order, as it is written: a JSON
// object keyed by node name, keeping that order.
type nodeTable []NodeDefinition

// MarshalJSON writes the nodes as an object keyed by name, in slice order.
func (ns nodeTable) MarshalJSON() ([]byte, error) {
	obj := make(OrderedObject, len(ns))
	for i, n := range ns {
		obj[i] = Member{Key: n.Name, Value: n}
	}
	return obj.MarshalJSON()
}

// UnmarshalJSON reads an object keyed by node name, keeping the document's key order. A node
// whose "name" is absent takes its key.
func (ns *nodeTable) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*ns = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("nodes must be a JSON object")
	}
	out := nodeTable{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var n NodeDefinition
		if err := dec.Decode(&n); err != nil {
			return fmt.Errorf("decode node %q: %w", key, err)
		}
		if n.Name == "" {
			n.Name = key
		}
		out = append(out, n)
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*ns = out
	return nil
}

// NodeNames returns the node names in add order.
func (m GraphManifest) NodeNames() []string {
	names := make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		names[i] = n.Name
	}
	return names
}

// GraphManifest is the compiled description of a graph. Manifests handed out by a
// GraphRegistration share their slices and metadata map with it: treat them as read-only.
type GraphManifest struct {
	// GraphName identifies the graph.
	GraphName string `json:"graph_name"`
	// Version is a free-form version string, DefaultVersion unless set.
	Version string `json:"version"`
	// GraphHash is the 16-hex-character topology hash (see ComputeHash).
	GraphHash string `json:"graph_hash"`
	// StateModelName is the bare Go type name of the state model, e.g. "SupportState".
	StateModelName string `json:"state_model_name"`
	// Entrypoint is the first node of every run.
	Entrypoint string `json:"entrypoint"`
	// Nodes lists the nodes in add order. It is written as a JSON object keyed by node name,
	// in that order.
	Nodes []NodeDefinition `json:"nodes"`
	// EventHandlerNames lists the registered event names, sorted.
	EventHandlerNames []string `json:"event_handler_names"`
	// Metadata is user metadata; it enters the hash.
	Metadata map[string]any `json:"metadata"`
	// Reducers names the reducer of each state field that has one (ManifestBuilder.Reduce):
	// field → reducer name. It enters the hash only when not empty.
	Reducers map[string]string `json:"reducers,omitempty"`
	// SearchKeys names the top-level fields of the state whose start values index the run
	// (ManifestBuilder.SearchKeys), in declaration order. They do not enter the hash: declaring
	// or changing them makes no new version. Written only when not empty.
	SearchKeys []string `json:"search_keys,omitempty"`

	index map[string]int // node name → position in Nodes; nil for decoded manifests
}

// node returns the definition of the named node.
func (m GraphManifest) node(name string) (NodeDefinition, bool) {
	if m.index != nil {
		i, ok := m.index[name]
		if !ok {
			return NodeDefinition{}, false
		}
		return m.Nodes[i], true
	}
	for _, n := range m.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeDefinition{}, false
}

// MarshalJSON writes the manifest with snake_case keys in field order. Metadata is written
// with sorted keys and floats keep their fractional part (1.0 stays 1.0), so that a decoded
// manifest hashes as it was built (docs/lineage.md).
func (m GraphManifest) MarshalJSON() ([]byte, error) {
	md := m.Metadata
	if md == nil {
		md = map[string]any{}
	}
	mdRaw, err := appendCanonicalMap(nil, md, 0)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return json.Marshal(manifestWire{
		GraphName: m.GraphName, Version: m.Version, GraphHash: m.GraphHash,
		StateModelName: m.StateModelName, Entrypoint: m.Entrypoint, Nodes: nodeTable(m.Nodes),
		EventHandlerNames: m.EventHandlerNames, Reducers: m.Reducers, Metadata: mdRaw, SearchKeys: m.SearchKeys,
	})
}

// manifestWire is a manifest as it is written: its keys in order, the nodes as an object.
type manifestWire struct {
	GraphName         string            `json:"graph_name"`
	Version           string            `json:"version"`
	GraphHash         string            `json:"graph_hash"`
	StateModelName    string            `json:"state_model_name"`
	Entrypoint        string            `json:"entrypoint"`
	Nodes             nodeTable         `json:"nodes"`
	EventHandlerNames []string          `json:"event_handler_names"`
	Reducers          map[string]string `json:"reducers,omitempty"`
	Metadata          json.RawMessage   `json:"metadata"`
	SearchKeys        []string          `json:"search_keys,omitempty"`
}

// UnmarshalJSON reads a manifest written by MarshalJSON. Metadata numbers are kept as
// json.Number so that integers and floats hash as they were written (1 vs 1.0).
func (m *GraphManifest) UnmarshalJSON(data []byte) error {
	var w manifestWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = GraphManifest{
		GraphName: w.GraphName, Version: w.Version, GraphHash: w.GraphHash,
		StateModelName: w.StateModelName, Entrypoint: w.Entrypoint, Nodes: []NodeDefinition(w.Nodes),
		EventHandlerNames: w.EventHandlerNames, Reducers: w.Reducers, SearchKeys: w.SearchKeys,
	}
	if len(w.Metadata) > 0 && string(w.Metadata) != "null" {
		dec := json.NewDecoder(bytes.NewReader(w.Metadata))
		dec.UseNumber()
		if err := dec.Decode(&m.Metadata); err != nil {
			return fmt.Errorf("decode metadata: %w", err)
		}
	}
	return nil
}
