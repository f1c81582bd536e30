package durabletest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ErrInjected is the cause of a failure injected by Options.Faults.
var ErrInjected = errors.New("durabletest: injected transient failure")

var errNegative = errors.New("options: negative value")

// faultyGraph fails the first attempts of some nodes before running the real handler.
type faultyGraph struct {
	durable.Graph
	mu   sync.Mutex
	left map[string]int // guarded by mu
}

// ExecuteNode fails with a *durable.HandlerError wrapping ErrInjected while node has faults
// left, as a failing handler would.
func (g *faultyGraph) ExecuteNode(ctx context.Context, node string, state json.RawMessage) (json.RawMessage, error) {
	g.mu.Lock()
	fail := g.left[node] > 0
	if fail {
		g.left[node]--
	}
	g.mu.Unlock()
	if fail {
		return nil, &durable.HandlerError{Kind: "node", Name: node, Err: ErrInjected}
	}
	return g.Graph.ExecuteNode(ctx, node, state)
}

func cloneFaults(m map[string]int) map[string]int { return maps.Clone(m) }

// CheckEvent checks events as the wrapped graph does (graphrun.EventChecker).
func (g *faultyGraph) CheckEvent(event string, payload json.RawMessage) error {
	if c, ok := graphrun.Of(g.Graph).(graphrun.EventChecker); ok {
		return c.CheckEvent(event, payload)
	}
	return nil
}

// NodePolicy forwards the wrapped graph's per-node policies (graphrun.NodePolicies), so that a
// node's retry policy, timeout and failure route hold under injected faults.
func (g *faultyGraph) NodePolicy(node string) durable.NodePolicy {
	if p, ok := graphrun.Of(g.Graph).(graphrun.NodePolicies[durable.NodePolicy]); ok {
		return p.NodePolicy(node)
	}
	return durable.NodePolicy{}
}

// Join joins a fan-out's branches as the wrapped graph does (graphrun.Joiner), else with
// graphrun.JoinBranches.
func (g *faultyGraph) Join(ctx context.Context, base json.RawMessage, results []graphrun.BranchResult) (json.RawMessage, error) {
	if bg, ok := graphrun.Of(g.Graph).(graphrun.Joiner); ok {
		return bg.Join(ctx, base, results)
	}
	return graphrun.JoinBranches(base, results)
}
