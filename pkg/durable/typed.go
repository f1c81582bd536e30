package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// StepFunc is the typed node handler: it receives a validated copy of the state and returns
// the new state. The engine records the same history as for the equivalent map-of-updates
// handler: the update is derived from the fields whose JSON changed, merged and validated
// exactly like an Update. Returning the state unchanged is "no change". A returned error
// fails the step (retried under a RetryPolicy unless NonRetryable), as for NodeFunc.
//
// Handlers may run more than once for the same step (see StepInfo) and must keep their side
// effects idempotent.
type StepFunc[S any] func(ctx context.Context, state S) (S, error)

// DecideFunc is the typed route handler: it returns the RouteDecision made with Next,
// Complete, WaitForEvent, Sleep or SleepUntil. The zero RouteDecision means "no decision": the node's static
// next node (WithNext), else completion, like a route handler returning nil.
type DecideFunc[S any] func(ctx context.Context, state S) (RouteDecision, error)

// EventStepFunc is the typed event handler of OnEvent: it receives the state and the event
// payload decoded into P, and returns the new state (the update is derived as for StepFunc).
type EventStepFunc[S, P any] func(ctx context.Context, state S, payload P) (S, error)

// typedHandler remembers the user's function behind an adapter, so that the "already
// registered to a different callable" check sees the user's function, not the adapter.
type typedHandler struct {
	fn any // the user's function
}

// AddStep adds a node whose handler returns the new state (StepFunc). Checks, in order, with
// their exact errors (wrapping ErrInvalidGraph): "duplicate node name '<name>'", "callable
// cannot be None", "handler name '<h>' already registered to a different callable" (it
// compares fn, not the adapter around it), "route handler name '<r>' already registered to a
// different callable", "terminal nodes cannot define next_node or route_handler_name", then
// the per-node policy checks of WithRetry and WithTimeout. A failed AddStep changes nothing,
// and Build reports the first such error again so that an unchecked error cannot produce a
// graph.
//
// A handler given no name is named after its node, "node:<name>" (a route handler
// "route:<name>"): see names.go. A graph built with AddStep hashes like its AddNode twin with
// the same names.
func (b *ManifestBuilder[S]) AddStep(name string, fn StepFunc[S], opts ...NodeOption) error {
	if fn == nil {
		return b.addNode(name, nil, nil, opts...)
	}
	adapter := func(ctx context.Context, s S) (any, error) {
		old, err := b.fieldJSON(&s)
		if err != nil {
			return nil, err
		}
		next, err := fn(ctx, s)
		if err != nil {
			return nil, err
		}
		return b.diff(old, &next)
	}
	return b.addNode(name, adapter, typedHandler{fn: fn}, opts...)
}

// WithDecide sets the node's route handler to a typed DecideFunc. Its default name is
// "route:<node name>"; WithRouteName overrides it as for WithRoute.
func WithDecide[S any](fn DecideFunc[S]) NodeOption {
	return func(o *nodeOptions) {
		if fn == nil {
			o.route, o.routeIdentity = nil, nil
			return
		}
		o.route = RouteFunc[S](func(ctx context.Context, s S) (any, error) {
			d, err := fn(ctx, s)
			if err != nil || d.isZero() {
				return nil, err
			}
			return d, nil
		})
		o.routeIdentity = fn
	}
}

// OnEvent registers on b the typed handler of eventName: the event body is decoded into P, and
// the handler returns the new state. It is AddEventHandler's typed form, with the same checks
// and errors; event handler names do not enter the graph hash.
//
// Clients are forgiven unknown fields: unknown object keys of the body are ignored. A struct
// P is decoded by the state model rules (fields tagged `durable:"required"` must be present,
// integers are lax, Validate runs); a value of the wrong type or a missing required field is
// an *EventPayloadError, which the engine's RaiseEvent returns before anything is stored
// (CheckEvent). A body that still fails at apply time fails the run with
// "decode payload of event '<event>': <reason>".
func OnEvent[S, P any](b *ManifestBuilder[S], eventName string, fn EventStepFunc[S, P]) error {
	if fn == nil {
		return b.addEventHandler(eventName, nil)
	}
	decode := payloadDecoder[P](eventName)
	if err := b.addEventHandler(eventName, func(ctx context.Context, s S, payload json.RawMessage) (any, error) {
		var p P
		if err := decode(payload, &p); err != nil {
			return nil, fmt.Errorf("decode payload of event '%s': %w", eventName, err)
		}
		old, err := b.fieldJSON(&s)
		if err != nil {
			return nil, err
		}
		next, err := fn(ctx, s, p)
		if err != nil {
			return nil, err
		}
		return b.diff(old, &next)
	}); err != nil {
		return err
	}
	b.eventChecks[eventName] = func(payload json.RawMessage) error {
		var p P
		return decode(payload, &p)
	}
	b.recordEventPayload(eventName, reflect.TypeFor[P]())
	return nil
}

// fieldJSON encodes each state field of *s, by JSON name.
func (b *ManifestBuilder[S]) fieldJSON(s *S) (map[string]string, error) {
	schema, err := b.stateSchema()
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(s).Elem()
	out := make(map[string]string, len(schema.fields))
	for _, f := range schema.fields {
		raw, err := json.Marshal(rv.Field(f.index).Interface())
		if err != nil {
			return nil, schema.errorf(f.name, "encode value: %v", err)
		}
		out[f.name] = string(raw)
	}
	return out, nil
}

// diff returns the Update holding the fields of *next whose JSON differs from old; nil when
// nothing changed.
func (b *ManifestBuilder[S]) diff(old map[string]string, next *S) (any, error) {
	now, err := b.fieldJSON(next)
	if err != nil {
		return nil, err
	}
	schema, _ := b.stateSchema()
	rv := reflect.ValueOf(next).Elem()
	var u Update
	for _, f := range schema.fields {
		if now[f.name] == old[f.name] {
			continue
		}
		if u == nil {
			u = Update{}
		}
		u[f.name] = rv.Field(f.index).Interface()
	}
	if u == nil {
		return nil, nil
	}
	return u, nil
}

// stateSchema reflects S once per builder, for the typed adapters.
func (b *ManifestBuilder[S]) stateSchema() (*stateSchema, error) {
	b.schemaOnce.Do(func() { b.schema, b.schemaErr = newStateSchema(reflect.TypeFor[S]()) })
	return b.schema, b.schemaErr
}
