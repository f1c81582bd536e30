package durable

import (
	"context"
	"encoding/json"
)

// The map-of-updates form of a graph (see the package documentation): handlers that return a
// partial update of the state instead of the new state, for graphs ported from a dict-of-
// updates runtime. Everything else is shared with the typed form (typed.go).

// Update is a shallow state update returned by node and event handlers: its top-level keys
// overwrite the state fields with the same JSON name. A key that names no state field fails
// the step with "validate state <Model>: field '<key>': unknown field in update" (a typo such
// as "stauts" is never dropped silently). Prefer the typed forms (AddStep, OnEvent), which
// return the new state and cannot misspell a field.
type Update = map[string]any

// NodeFunc is a node handler. It receives a validated copy of the state and returns an update
// interpreted as: nil (no change), an Update / map[string]any (shallow merge
// of top-level fields), json.RawMessage holding an object or null, or a whole S or *S
// (replaces the state). Any other type fails the step with
// "unsupported state merge result: <type>". A returned error fails the step: it is retried
// under a retry policy (GraphPolicy.Retry, WithRetry) unless wrapped in NonRetryable,
// then takes the node's failure route (WithFailureRoute) or fails the run.
//
// Handlers may run more than once for the same step (see StepInfo) and must keep their side
// effects idempotent.
type NodeFunc[S any] func(ctx context.Context, state S) (any, error)

// RouteFunc is a route handler. It returns: nil (fall back to the node's
// static next_node, else complete), a RouteDecision or *RouteDecision, a string (the node to
// go to, or "__complete__"), or a decision object as Update / map[string]any /
// json.RawMessage. Any other type fails with "unsupported route decision: <type>".
type RouteFunc[S any] func(ctx context.Context, state S) (any, error)

// EventFunc is an event handler. payload is the raw event body (any JSON value, "null" when
// the event carried none). The result is interpreted like a NodeFunc's.
type EventFunc[S any] func(ctx context.Context, state S, payload json.RawMessage) (any, error)

// AddNode adds a node whose handler returns an update of the state (NodeFunc): AddStep's
// map-of-updates twin, with its options, checks, errors and default names.
func (b *ManifestBuilder[S]) AddNode(name string, handler NodeFunc[S], opts ...NodeOption) error {
	return b.addNode(name, handler, nil, opts...)
}

// AddEventHandler registers the handler applied when the event eventName is consumed. Errors
// (wrapping ErrInvalidGraph): "duplicate event handler for event '<event>'",
// "callable cannot be None"; Build reports the first one again.
func (b *ManifestBuilder[S]) AddEventHandler(eventName string, handler EventFunc[S]) error {
	return b.addEventHandler(eventName, handler)
}

// WithRoute sets the node's route handler. Its default name is "route:<node name>" (names.go).
func WithRoute[S any](fn RouteFunc[S]) NodeOption {
	return func(o *nodeOptions) {
		if fn == nil {
			o.route, o.routeIdentity = nil, nil
			return
		}
		o.route, o.routeIdentity = fn, nil
	}
}
