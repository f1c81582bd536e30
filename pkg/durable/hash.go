package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// CanonicalTopology returns the canonical JSON object for the manifest:
// entrypoint, sorted event names, graph name, metadata, nodes (a node's failure_node only when
// it has one), reducers (only when the graph declares any, ManifestBuilder.Reduce), state
// model name and version,
// keys sorted at every depth, Python json.dumps string and float rules, no whitespace
// (parity: docs/lineage.md). GraphHash itself is not part of it.
func (m GraphManifest) CanonicalTopology() ([]byte, error) {
	dst := make([]byte, 0, 256+160*len(m.Nodes))
	dst = append(dst, `{"entrypoint":`...)
	dst = pyjson.AppendString(dst, m.Entrypoint)

	dst = append(dst, `,"event_handler_names":[`...)
	events := slices.Clone(m.EventHandlerNames)
	slices.Sort(events)
	for i, e := range events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = pyjson.AppendString(dst, e)
	}

	dst = append(dst, `],"graph_name":`...)
	dst = pyjson.AppendString(dst, m.GraphName)

	dst = append(dst, `,"metadata":`...)
	if m.Metadata == nil {
		dst = append(dst, "{}"...)
	} else {
		var err error
		if dst, err = appendCanonicalMap(dst, m.Metadata, 0); err != nil {
			return nil, fmt.Errorf("encode metadata: %w", err)
		}
	}

	dst = append(dst, `,"nodes":{`...)
	order := make([]int32, len(m.Nodes)) // sort indices: cheaper than moving NodeDefinitions
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(m.Nodes[a].Name, m.Nodes[b].Name) })
	for i, idx := range order {
		n := &m.Nodes[idx]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = pyjson.AppendString(dst, n.Name)
		dst = append(dst, `:{`...)
		if n.FailureNode != "" { // only when set: graphs without failure routes keep their hash
			dst = append(dst, `"failure_node":`...)
			dst = pyjson.AppendString(dst, n.FailureNode)
			dst = append(dst, ',')
		}
		dst = append(dst, `"handler_name":`...)
		dst = pyjson.AppendString(dst, n.HandlerName)
		dst = append(dst, `,"name":`...)
		dst = pyjson.AppendString(dst, n.Name)
		dst = append(dst, `,"next_node":`...)
		dst = appendNullableString(dst, n.NextNode)
		dst = append(dst, `,"route_handler_name":`...)
		dst = appendNullableString(dst, n.RouteHandlerName)
		dst = append(dst, `,"terminal":`...)
		if n.Terminal {
			dst = append(dst, "true}"...)
		} else {
			dst = append(dst, "false}"...)
		}
	}

	dst = appendReducers(append(dst, '}'), m.Reducers)
	dst = append(dst, `,"state_model_name":`...)
	dst = pyjson.AppendString(dst, m.StateModelName)
	dst = append(dst, `,"version":`...)
	dst = pyjson.AppendString(dst, m.Version)
	return append(dst, '}'), nil
}

// ComputeHash returns the graph hash of the manifest: the first 16 lowercase hex characters of
// the SHA-256 of CanonicalTopology. It ignores the manifest's GraphHash field, so comparing the
// two verifies a manifest.
func (m GraphManifest) ComputeHash() (string, error) {
	canon, err := m.CanonicalTopology()
	if err != nil {
		return "", err
	}
	return hashCanonical(canon), nil
}

func hashCanonical(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:8])
}

func appendNullableString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return pyjson.AppendString(dst, s)
}
