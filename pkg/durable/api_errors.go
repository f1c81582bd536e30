package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Request errors the service finds before calling Runs. They become HTTP status in
// errorResponse, and nowhere else.
var (
	// errBodyNotObject: the start body is empty, not JSON, or not an object.
	errBodyNotObject = errors.New("durable: request body must be valid JSON object")
	// errReasonNotString: the cancel body has a non-string reason.
	errReasonNotString = errors.New("durable: reason must be a string")
	// errBodyTooLarge: the body exceeds Options.MaxRequestBodyBytes.
	errBodyTooLarge = errors.New("durable: request body too large")
)

// graphNotFoundError is an unknown graph name on start.
type graphNotFoundError struct{ name string }

func (e *graphNotFoundError) Error() string { return fmt.Sprintf("unknown graph '%s'", e.name) }
func (e *graphNotFoundError) Unwrap() error { return ErrUnknownGraph }

// bodyValidationError lists start-body fields that are truthy but not objects.
type bodyValidationError struct{ details []fieldError }

func (e *bodyValidationError) Error() string {
	return fmt.Sprintf("durable: invalid request body (%d fields)", len(e.details))
}

// fieldError is one entry of the 400 "invalid request body" details, in wire key order.
type fieldError struct {
	Type  string          `json:"type"`
	Loc   []string        `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
}

// queryError is a bad query parameter of the list or history endpoints.
type queryError struct{ param, want string }

func (e *queryError) Error() string {
	return fmt.Sprintf("invalid query parameter '%s': %s", e.param, e.want)
}

// Response bodies, fields in wire order.
type (
	errorBody struct {
		Error string `json:"error"`
	}
	detailsBody struct {
		Error   string       `json:"error"`
		Details []fieldError `json:"details"`
	}
	runStateBody struct {
		Error         string    `json:"error"`
		InstanceID    string    `json:"instance_id"`
		RuntimeStatus RunStatus `json:"runtime_status"`
	}
)

// errorResponse is the one place where errors of this surface become an HTTP status and
// body. Anything it does not know is a 500 with a fixed body; the caller logs the cause.
func errorResponse(err error) (int, any) {
	var (
		graph    *graphNotFoundError
		invalid  *bodyValidationError
		query    *queryError
		exists   *RunExistsError
		finished *RunFinishedError
		active   *RunNotFinishedError
	)
	switch {
	case errors.As(err, &graph):
		return http.StatusNotFound, errorBody{graph.Error()}
	case errors.Is(err, ErrRunNotFound):
		return http.StatusNotFound, errorBody{"instance not found"}
	case errors.Is(err, errBodyNotObject):
		return http.StatusBadRequest, errorBody{"request body must be valid JSON object"}
	case errors.As(err, &invalid):
		return http.StatusBadRequest, detailsBody{"invalid request body", invalid.details}
	case errors.Is(err, ErrInvalidInstanceID):
		return http.StatusBadRequest, errorBody{"invalid instance_id"}
	case errors.Is(err, errReasonNotString):
		return http.StatusBadRequest, errorBody{"reason must be a string"}
	case errors.As(err, &query):
		return http.StatusBadRequest, errorBody{query.Error()}
	case errors.Is(err, errBodyTooLarge):
		return http.StatusRequestEntityTooLarge, errorBody{"request body too large"}
	case errors.As(err, &exists):
		return http.StatusConflict, runStateBody{"instance already exists", exists.InstanceID, exists.Status}
	case errors.As(err, &finished):
		return http.StatusConflict, runStateBody{"instance is not running", finished.InstanceID, finished.Status}
	case errors.As(err, &active):
		return http.StatusConflict, runStateBody{"instance is still active", active.InstanceID, active.Status}
	}
	return http.StatusInternalServerError, errorBody{"internal error"}
}

// handle adapts an endpoint that returns an error to an http.Handler: errors are answered
// through errorResponse, and server errors are logged with their cause (never returned).
func (s *Service) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		status, body := errorResponse(err)
		if status >= http.StatusInternalServerError {
			s.logger.ErrorContext(r.Context(), "durable request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		} else {
			s.logger.DebugContext(r.Context(), "durable request rejected", "method", r.Method, "path", r.URL.Path, "status", status)
		}
		writeJSON(w, status, body, s.logger)
	})
}

// internalErrorBody is written when a body cannot be encoded.
var internalErrorBody = []byte(`{"error": "internal error"}`)

// writeJSON writes v as a json.dumps-style JSON body.
func writeJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		logger.Error("encode durable response", "error", err)
		status, body = http.StatusInternalServerError, internalErrorBody
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
