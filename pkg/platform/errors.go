package platform

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Request-level error kinds of the platform surface. Each HTTP failure wraps exactly one of
// them in a publicError whose message is the response's `detail`; httpStatus maps them.
var (
	errBadRequest     = errors.New("platform: bad request")            // 400
	errValidation     = errors.New("platform: validation error")       // 422
	errNotFound       = errors.New("platform: not found")              // 404
	errConflict       = errors.New("platform: conflict")               // 409
	errNotImplemented = errors.New("platform: not implemented")        // 501
	errInternal       = errors.New("platform: internal error")         // 500
	errRequestTimeout = errors.New("platform: request body timed out") // 408
	errUnauthorized   = errors.New("platform: unauthorized")           // 401
	errForbidden      = errors.New("platform: forbidden")              // 403
)

// publicError is an error whose message is the public, contractual text.
type publicError struct {
	kind error
	msg  string
}

func (e *publicError) Error() string { return e.msg }
func (e *publicError) Unwrap() error { return e.kind }

func newPublic(kind error, format string, args ...any) error {
	return &publicError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func validationError(field, msg string) error {
	return newPublic(errValidation, "Validation error: %s: %s", field, msg)
}

// graphClientError is a hosted graph's error that blames the client (host.ClientStatus).
type graphClientError struct {
	status int
	msg    string
}

func (e *graphClientError) Error() string { return e.msg }

// graphFailure is the public error for a graph's failed run: the graph's own 4xx with its
// message when it blames the client, else "Graph execution failed" (a 500).
func graphFailure(err error) error {
	if status, msg, ok := host.ClientStatus(err); ok {
		return &publicError{kind: &graphClientError{status: status, msg: msg}, msg: msg}
	}
	return newPublic(errInternal, "Graph execution failed")
}

// httpStatus is the one place where an error of this surface becomes an HTTP status.
func httpStatus(err error) int {
	var gce *graphClientError
	if errors.As(err, &gce) {
		return gce.status
	}
	switch {
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, errValidation):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errNotFound):
		return http.StatusNotFound
	case errors.Is(err, errConflict):
		return http.StatusConflict
	case errors.Is(err, errNotImplemented):
		return http.StatusNotImplemented
	case errors.Is(err, errRequestTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, errForbidden):
		return http.StatusForbidden
	case errors.Is(err, errWaitExceeded):
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

// errorBody is the platform error body.
type errorBody struct {
	Detail string `json:"detail"`
}

// writeError answers err as `{"detail": "<message>"}`. Errors without a public message are
// logged and answered with a generic text.
func writeError(w http.ResponseWriter, err error, logger *slog.Logger) {
	var pe *publicError
	detail := "Internal server error"
	if errors.As(err, &pe) {
		detail = pe.msg
	} else {
		logger.Error("platform request failed", "error", err)
	}
	writeJSON(w, httpStatus(err), errorBody{Detail: detail}, logger)
}

// writeJSON answers v in the json.dumps style of the platform bodies.
func writeJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		logger.Error("encode platform response", "error", err)
		status, body = http.StatusInternalServerError, []byte(`{"detail": "Internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// repr quotes s like Python's repr of a str.
func repr(s string) string { return pyjson.Repr(s) }
