package runsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Request errors the service finds before calling Runs. They become HTTP status in
// errorResponse, and nowhere else.
var (
	// errBodyNotObject: the start body is empty, not JSON, or not an object.
	errBodyNotObject = errors.New("durable: request body must be valid JSON object")
	// errReasonNotString: the cancel body has a non-string reason.
	errReasonNotString = errors.New("durable: reason must be a string")
	// errEventBodyNotJSON: a non-empty event body that is not JSON.
	errEventBodyNotJSON = errors.New("durable: request body must be valid JSON")
	// errBodyTooLarge: the body exceeds Options.MaxRequestBodyBytes.
	errBodyTooLarge = errors.New("durable: request body too large")
)

// invalidEventNameMessage answers an event name outside engine.ValidEventName.
const invalidEventNameMessage = "invalid event_name: want 1 to 256 characters without control characters"

// graphNotFoundError is an unknown graph name, or with hash an unknown version of it.
type graphNotFoundError struct{ name, hash string }

func (e *graphNotFoundError) Error() string {
	if e.hash != "" {
		return fmt.Sprintf("unknown version '%s' of graph '%s'", e.hash, e.name)
	}
	return fmt.Sprintf("unknown graph '%s'", e.name)
}
func (e *graphNotFoundError) Unwrap() error { return durable.ErrUnknownGraph }

// bodyValidationError lists start-body fields that are truthy but not objects.
type bodyValidationError struct{ details []apiFieldError }

func (e *bodyValidationError) Error() string {
	return fmt.Sprintf("durable: invalid request body (%d fields)", len(e.details))
}

// apiFieldError is one entry of the 400 "invalid request body" details, in wire key order.
type apiFieldError struct {
	Type  string          `json:"type"`
	Loc   []string        `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
}

// apiQueryError is a bad query parameter of the list or history endpoints.
type apiQueryError struct{ param, want string }

func (e *apiQueryError) Error() string {
	return fmt.Sprintf("invalid query parameter '%s': %s", e.param, e.want)
}

// Response bodies, fields in wire order.
type (
	apiErrorBody struct {
		Error string `json:"error"`
	}
	apiDetailsBody struct {
		Error   string          `json:"error"`
		Details []apiFieldError `json:"details"`
	}
	apiStateIssue struct {
		Loc []string `json:"loc"`
		Msg string   `json:"msg"`
	}
	apiStateBody struct {
		Error   string          `json:"error"`
		Details []apiStateIssue `json:"details"`
	}
	apiRunStateBody struct {
		Error         string           `json:"error"`
		InstanceID    string           `json:"instance_id"`
		RuntimeStatus engine.RunStatus `json:"runtime_status"`
	}
)

// errorResponse is the one place where errors of this surface become an HTTP status and
// body. Anything it does not know is a 500 with a fixed body; the caller logs the cause.
func errorResponse(err error) (int, any) {
	var (
		graph    *graphNotFoundError
		invalid  *bodyValidationError
		query    *apiQueryError
		exists   *engine.RunExistsError
		finished *engine.RunFinishedError
		active   *engine.RunNotFinishedError
		body     *funchost.BodyError
		state    *durable.StateErrors
		payload  *durable.EventPayloadError
		noEvent  *engine.UnknownEventError
	)
	switch {
	case errors.As(err, &graph):
		return http.StatusNotFound, apiErrorBody{graph.Error()}
	case errors.Is(err, engine.ErrRunNotFound):
		return http.StatusNotFound, apiErrorBody{"instance not found"}
	case errors.Is(err, errBodyNotObject):
		return http.StatusBadRequest, apiErrorBody{"request body must be valid JSON object"}
	case errors.As(err, &invalid):
		return http.StatusBadRequest, apiDetailsBody{"invalid request body", invalid.details}
	case errors.Is(err, engine.ErrInvalidInstanceID):
		return http.StatusBadRequest, apiErrorBody{"invalid instance_id"}
	case errors.Is(err, engine.ErrInvalidEventName):
		return http.StatusBadRequest, apiErrorBody{invalidEventNameMessage}
	case errors.As(err, &state):
		details := make([]apiStateIssue, len(state.Issues))
		for i, is := range state.Issues {
			details[i] = apiStateIssue{Loc: []string{}, Msg: is.Msg}
			if is.Field != "" {
				details[i].Loc = []string{is.Field}
			}
		}
		return http.StatusBadRequest, apiStateBody{"invalid initial state", details}
	case errors.As(err, &noEvent):
		return http.StatusNotFound, apiErrorBody{noEvent.Error()}
	case errors.As(err, &payload):
		loc := []string{}
		if payload.Field != "" {
			loc = []string{payload.Field}
		}
		return http.StatusBadRequest, apiStateBody{payload.Error(), []apiStateIssue{{Loc: loc, Msg: payload.Reason}}}
	case errors.Is(err, errEventBodyNotJSON), errors.Is(err, engine.ErrInvalidEventPayload):
		return http.StatusBadRequest, apiErrorBody{"request body must be valid JSON"}
	case errors.Is(err, errReasonNotString):
		return http.StatusBadRequest, apiErrorBody{"reason must be a string"}
	case errors.As(err, &query):
		return http.StatusBadRequest, apiErrorBody{query.Error()}
	case errors.Is(err, engine.ErrInvalidQuery):
		// The service checks every other parameter first, so what storage refuses is the token.
		return http.StatusBadRequest, apiErrorBody{"invalid query parameter 'continuation_token': want the token of a previous page"}
	case errors.Is(err, errBodyTooLarge):
		return http.StatusRequestEntityTooLarge, apiErrorBody{"request body too large"}
	case errors.As(err, &body):
		return body.Status(), apiErrorBody{body.Message()}
	case errors.As(err, &exists):
		return http.StatusConflict, apiRunStateBody{"instance already exists", exists.InstanceID, exists.Status}
	case errors.As(err, &finished):
		return http.StatusConflict, apiRunStateBody{"instance is not running", finished.InstanceID, finished.Status}
	case errors.As(err, &active):
		return http.StatusConflict, apiRunStateBody{"instance is still active", active.InstanceID, active.Status}
	case errors.Is(err, errNoCaller):
		return http.StatusUnauthorized, apiErrorBody{errNoCaller.Error()}
	case errors.Is(err, errUntrustedCaller):
		return http.StatusForbidden, apiErrorBody{errUntrustedCaller.Error()}
	case errors.Is(err, errAdminOnly):
		return http.StatusForbidden, apiErrorBody{errAdminOnly.Error()}
	case errors.Is(err, engine.ErrConflict):
		// Writers on one run kept moving its head: nothing was written; the client retries.
		return http.StatusServiceUnavailable, apiErrorBody{"instance is busy, retry later"}
	}
	return http.StatusInternalServerError, apiErrorBody{"internal error"}
}

// RetryAfterBusy is the Retry-After (seconds) of a 503 {"error": "instance is busy, retry
// later"}: the request lost to other writers on the same run too often (engine.ErrConflict)
// and wrote nothing, so sending it again is safe (an event with the same Idempotency-Key is
// stored once).
const RetryAfterBusy = "1"

// handle adapts an endpoint that returns an error to an http.Handler: errors are answered
// through errorResponse, and server errors are logged with their cause (never returned).
func (s *Service) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		status, body := errorResponse(err)
		switch {
		case status == http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", RetryAfterBusy)
			s.logger.WarnContext(r.Context(), "durable request refused: run busy", "method", r.Method, "path", r.URL.Path, "error", err)
		case status >= http.StatusInternalServerError:
			s.logger.ErrorContext(r.Context(), "durable request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		default:
			s.logger.DebugContext(r.Context(), "durable request rejected", "method", r.Method, "path", r.URL.Path, "status", status)
		}
		apiWriteJSON(w, status, body, s.logger)
	})
}

// apiInternalErrorBody is written when a body cannot be encoded.
var apiInternalErrorBody = []byte(`{"error": "internal error"}`)

// apiWriteJSON writes v as a json.dumps-style JSON body.
func apiWriteJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		logger.Error("encode durable response", "error", err)
		status, body = http.StatusInternalServerError, apiInternalErrorBody
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
