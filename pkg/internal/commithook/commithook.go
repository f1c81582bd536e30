// Package commithook is the seam through which the test kit (pkg/durabletest) reaches the
// engine's commit path: a hook carried in the context of one delivery of a work item, called
// right before each batch that commits the return of a node's handler (a step's or a fan-out
// branch's). The kit uses it to kill the worker there, to deliver the same work item again
// while the first delivery's commit is pending, and to mark the batch whose reply its store
// loses.
//
// It is internal: an application cannot set it, and an engine whose context carries no hook
// pays one context lookup per commit.
package commithook

import "context"

// Point is where a hook is called: before the batch that commits the return of Node's handler
// in step Step of run RunID.
type Point struct {
	RunID string
	// Step is the step the batch commits (a fan-out's branches share their fan-out's step).
	Step int64
	// Node is the node whose handler returned.
	Node string
	// Branch is 1 + the index of the fan-out branch the handler ran in, 0 outside a fan-out.
	Branch int
}

// Hook is called before the commit at p. The context it returns is the one the batch is
// submitted with (a store wrapper may read what the hook put in it); an error fails the
// commit before it is submitted, nothing written, as a storage error would.
type Hook func(ctx context.Context, p Point) (context.Context, error)

type key struct{}

// With returns ctx carrying h.
func With(ctx context.Context, h Hook) context.Context { return context.WithValue(ctx, key{}, h) }

// Call calls the hook ctx carries at p; without one it returns ctx and no error.
func Call(ctx context.Context, p Point) (context.Context, error) {
	h, _ := ctx.Value(key{}).(Hook)
	if h == nil {
		return ctx, nil
	}
	return h(ctx, p)
}
