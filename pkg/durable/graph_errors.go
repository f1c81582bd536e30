package durable

import "errors"

// Sentinels to branch on with errors.Is. The errors returned by this package keep the exact
// messages of the contract (e.g. "unknown graph 'g'") and wrap one of these.
var (
	// ErrInvalidGraph marks a builder error (add_node, add_event_handler or build).
	ErrInvalidGraph = errors.New("durable: invalid graph")
	// ErrInvalidRouteDecision marks a route decision that fails validation.
	ErrInvalidRouteDecision = errors.New("durable: invalid route decision")
	// ErrUnknownNode marks a node name, route target or resume node missing from the manifest.
	ErrUnknownNode = errors.New("durable: unknown node")
	// ErrUnknownEvent marks an event with no registered handler.
	ErrUnknownEvent = errors.New("durable: unknown event handler")
	// ErrInvalidState marks a state that does not validate against the state model.
	ErrInvalidState = errors.New("durable: invalid state")
	// ErrUnsupportedResult marks a handler result of a type the contract does not interpret.
	ErrUnsupportedResult = errors.New("durable: unsupported handler result")
	// ErrUnknownGraph marks a registry lookup that found nothing.
	ErrUnknownGraph = errors.New("durable: unknown graph")
	// ErrGraphExists marks a registration of an already registered (name, hash).
	ErrGraphExists = errors.New("durable: graph already registered")
)

// modelError carries a contract-exact message and a sentinel kind.
type modelError struct {
	kind error
	msg  string
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.kind }

func newError(kind error, msg string) error { return &modelError{kind: kind, msg: msg} }

// HandlerError is returned when a user handler fails. Its message is the handler's own error
// message, so that the engine's "<step> failed: <cause>" shows what the handler said.
type HandlerError struct {
	// Kind is "node", "route" or "event".
	Kind string
	// Name is the node name (node, route) or event name (event).
	Name string
	// Err is the handler's error.
	Err error
}

// Error returns the handler's message, unchanged.
func (e *HandlerError) Error() string { return e.Err.Error() }

// Unwrap returns the handler's error.
func (e *HandlerError) Unwrap() error { return e.Err }
