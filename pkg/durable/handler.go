package durable

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime"
)

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

// funcName returns fn's Go package path and name as the runtime reports it, e.g.
// "github.com/acme/app/graphs.extract" (closures get ".func1" suffixes, method values "-fm"),
// or "" for nil. Default handler names derive from the node name instead (names.go), so that
// a graph's hash does not depend on its Go functions.
func funcName(fn any) string {
	pc := funcPointer(fn)
	if pc == 0 {
		return ""
	}
	if f := runtime.FuncForPC(pc); f != nil {
		return f.Name()
	}
	return ""
}

// funcPointer returns the code pointer of a func value, 0 for nil or non-funcs. Closures of the
// same literal share one code pointer; the contract compares function identity this way.
func funcPointer(fn any) uintptr {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	return v.Pointer()
}
