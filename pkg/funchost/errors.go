package funchost

import (
	"errors"
	"net/http"
)

// Errors returned when building a FunctionApp.
var (
	// ErrInvalidFunction reports a function that cannot be registered as given.
	ErrInvalidFunction = errors.New("funchost: invalid function")
	// ErrDuplicateFunction reports a second function with the same (case-insensitive) name.
	ErrDuplicateFunction = errors.New("funchost: duplicate function")
	// ErrRouteConflict reports a route the host would refuse or could not tell apart from
	// another one.
	ErrRouteConflict = errors.New("funchost: route conflict")
)

// Errors of the invocation protocol.
var (
	// errBadInvocation reports an invocation payload that cannot be decoded.
	errBadInvocation = errors.New("funchost: malformed invocation payload")
	// errUnknownFunction reports an invocation for a function the app does not have.
	errUnknownFunction = errors.New("funchost: unknown function")
)

// invocationStatus maps an invocation failure to the status of the reply to the host. Only the
// host sees it: 2xx means handled, anything else fails the invocation (an HTTP caller gets 500;
// a queue message is retried and eventually poisoned).
func invocationStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, errBadInvocation):
		return http.StatusBadRequest
	case errors.Is(err, errUnknownFunction):
		return http.StatusNotFound
	default:
		return http.StatusInternalServerError
	}
}
