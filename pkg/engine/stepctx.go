package engine

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// stepCtx is what a work item resolves once about its run's graph version and hands down to
// every step it runs: the graph registered for the run's (name, hash), and the run's guards.
// A run keeps its graph version for as long as it lives under one generation and nonce, and
// a registry only adds versions, so the value holds for every step of the handling.
type stepCtx struct {
	g   durable.Graph
	pol GraphPolicy // the graph's guards (policyOf: its own, overridden by Options.Policies)
	// maxSteps is the node visits a run of the graph may make (what a visit is: visit,
	// step.go).
	maxSteps int64
	// rows is how the run's history rows record its state (stateRows; nil: whole).
	rows *stateRows
	// live is the live writer of the step under way (emitted.go), nil with none.
	live *liveWriter
}

// stepCtxOf resolves the graph version of h's run and its policies. Errors:
// errVersionUnavailable (wrapped) when this process does not have the version (version.go).
func (e *Engine) stepCtxOf(h *head) (*stepCtx, error) {
	g, err := e.reg.Lookup(h.graph, h.hash)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errVersionUnavailable, err)
	}
	sc := &stepCtx{g: g, pol: policyOf(g, e.opts.Policies[h.graph]), maxSteps: int64(e.opts.MaxSteps), rows: stateRowsOf(g.Manifest())}
	if sc.pol.MaxSteps > 0 {
		sc.maxSteps = int64(sc.pol.MaxSteps)
	}
	return sc, nil
}

// nodePolicy returns the policy of node: the graph's own when it implements
// graphrun.NodePolicies, else only the failure route its manifest declares (nodepolicy.go).
func (sc *stepCtx) nodePolicy(node string) durable.NodePolicy { return nodePolicy(sc.g, node) }

// retry returns the retry policy of a node whose policy is np: the node's own
// (durable.WithRetry) over the graph's (GraphPolicy.Retry).
func (sc *stepCtx) retry(np durable.NodePolicy) RetryPolicy {
	if np.Retry != nil {
		return *np.Retry
	}
	return sc.pol.Retry
}
