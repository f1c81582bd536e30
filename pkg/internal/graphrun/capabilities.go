package graphrun

import (
	"context"
	"encoding/json"
)

// Of returns the value that carries g's optional capabilities, to type-assert the interfaces
// below on: the compiled graph behind a durable.GraphRegistration (whose capabilities are not
// on its public page), else g itself (a custom durable.Graph implements them as methods).
func Of(g any) any {
	if model.Capabilities != nil {
		if c := model.Capabilities(g); c != nil {
			return c
		}
	}
	return g
}

// BranchResult is what one branch of a fan-out produced: the state fields its node changed
// (StateUpdate of the state before the fan-out and the state after the node).
type BranchResult struct {
	// Index is the branch's position in the fan-out.
	Index int
	// Node is the node the branch visited.
	Node string
	// Update is a JSON object of the fields the branch changed, with their new values.
	Update json.RawMessage
}

// Joiner is the optional capability of a graph whose runs fan out (durable.ActionParallel):
// it merges the branches' results into the state at the join. A durable.GraphRegistration
// has it, with its reducers (ManifestBuilder.Reduce); for a graph without it the engine joins
// with JoinBranches.
type Joiner interface {
	// Join returns the state after merging results (one per branch, any order: they are
	// merged in Index order) into base, the state before the fan-out. Errors: a
	// *durable.BranchConflictError when two branches update a field with no reducer, a
	// reducer's error, or a *durable.StateError when the merged state does not validate.
	Join(ctx context.Context, base json.RawMessage, results []BranchResult) (json.RawMessage, error)
}

// StateChecker is the optional capability of a graph that validates a state object without
// running a handler: the engine checks a run's initial state with it at start. A
// durable.GraphRegistration has it.
type StateChecker interface {
	// CheckState validates state against the model with the rules of a step (unknown keys
	// dropped, defaults filled, lax integers, Validate). Errors: a *durable.StateErrors
	// listing every problem.
	CheckState(state json.RawMessage) error
}

// EventChecker is the optional capability of a graph that checks an event before it is
// stored. A durable.GraphRegistration has it.
type EventChecker interface {
	// CheckEvent returns "unknown event handler '<event>'" (durable.ErrUnknownEvent) when the
	// graph has no handler for event, a *durable.EventPayloadError when the payload does not
	// decode into the handler's payload type, else nil. Unknown keys of the payload are not
	// errors.
	CheckEvent(event string, payload json.RawMessage) error
}

// ChildOutputSetter is the optional capability of a graph that sets one state field to a
// child run's final state with the state model's checks; a durable.GraphRegistration has it.
// The engine uses it for durable.ChildRun.Into; for a graph without it, the engine sets the
// member of the state object as it is.
type ChildOutputSetter interface {
	// SetStateField returns state with the field named field (its JSON name) set to value,
	// validated against the state model. Errors: a *durable.StateError when value does not
	// fit the field or the result does not validate.
	SetStateField(ctx context.Context, state json.RawMessage, field string, value json.RawMessage) (json.RawMessage, error)
}

// NodePolicies is the optional capability of a graph that gives each node's policy (P is
// durable.NodePolicy): a durable.GraphRegistration has it; a graph without it runs every node
// under the graph's defaults, except that a FailureNode in its manifest is still honoured.
type NodePolicies[P any] interface {
	// NodePolicy returns the policy of node (the zero policy for an unknown node).
	NodePolicy(node string) P
}

// EventPayloadTyper is the optional capability of a graph that describes the payload types
// of its typed event handlers (P is durable.EventPayload); a durable.GraphRegistration has
// it.
type EventPayloadTyper[P any] interface {
	// EventPayload returns the payload of event's typed handler, or false when the graph has
	// no handler for event or an untyped one (AddEventHandler: any JSON value).
	EventPayload(event string) (P, bool)
}
