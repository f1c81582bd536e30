package engine

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/internal/commithook"
)

// The test kit's seam into the commit path (pkg/internal/commithook): before the batch that
// records the return of a node's handler, a hook carried by the delivery's context may kill
// the worker (an error: nothing is submitted), run another delivery of the same work item,
// or mark the batch for its store. A context without a hook costs one lookup.

// atStepCommit calls the hook at the commit of o, the outcome of the step after base's, when
// o records the return of a node's handler; otherwise it returns ctx.
func atStepCommit(ctx context.Context, base *head, o outcome) (context.Context, error) {
	if base.branchCount > 0 {
		return ctx, nil // a fan-out's join: its branches' handlers committed on their own
	}
	node := handlerNode(o)
	if node == "" {
		return ctx, nil
	}
	return commithook.Call(ctx, commithook.Point{RunID: base.runID, Step: base.step + 1, Node: node})
}

// atBranchCommit calls the hook at the commit of branch b of h's fan-out.
func atBranchCommit(ctx context.Context, h *head, b branchRef) (context.Context, error) {
	return commithook.Call(ctx, commithook.Point{RunID: h.runID, Step: h.step + 1, Node: b.node, Branch: int(b.index) + 1})
}

// handlerNode returns the node whose handler's return o records: a visit (whatever its
// route decided), a failed handler's retry, failure route or run failure, a route that
// failed after its node completed; "" for an outcome that runs no node (a step's begin, an
// applied event, a timeout, a join, a child's end).
func handlerNode(o outcome) string {
	switch x := o.(type) {
	case interface{ visitOf() *visited }:
		return x.visitOf().node
	case *retryScheduled:
		return x.node
	case *failureRouted:
		return x.node
	case *runFailed:
		if x.name == ExecuteNodeName || x.name == ResolveRouteName {
			return x.node
		}
	}
	return ""
}
