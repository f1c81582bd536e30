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
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Request errors the service finds before calling Runs, each answered as it is.
var (
	// errBodyNotObject: the start body is empty, not JSON, or not an object.
	errBodyNotObject = apierror.New(apierror.ErrBadRequest, "request body must be valid JSON object")
	// errReasonNotString: the cancel body has a non-string reason.
	errReasonNotString = apierror.New(apierror.ErrBadRequest, "reason must be a string")
	// errEventBodyNotJSON: a non-empty event body that is not JSON.
	errEventBodyNotJSON = apierror.New(apierror.ErrBadRequest, "request body must be valid JSON")
	// errBodyTooLarge: the body exceeds Options.MaxRequestBodyBytes.
	errBodyTooLarge = apierror.New(apierror.ErrTooLarge, "request body too large")
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

// apiBodyError is a request body member that is missing, unknown or of the wrong form (the
// rewind routes'): a 400 with its message.
type apiBodyError struct{ msg string }

func (e *apiBodyError) Error() string { return e.msg }

// apiStateIssue is one entry of the 400 "invalid initial state" details.
type apiStateIssue struct {
	Loc []string `json:"loc"`
	Msg string   `json:"msg"`
}

// publicError is the *apierror.Error that answers err on this surface (apierror.Status gives
// its status, apierror.Runs writes its body), or err itself when it has no public answer: a
// 500 {"error": "internal error"}, whose cause the caller logs.
func publicError(err error) error {
	var (
		pub      *apierror.Error
		graph    *graphNotFoundError
		invalid  *bodyValidationError
		query    *apiQueryError
		exists   *engine.RunExistsError
		finished *engine.RunFinishedError
		unfailed *engine.RunNotFailedError
		noRewind *engine.RewindUnsupportedError
		bodyErr  *apiBodyError
		active   *engine.RunNotFinishedError
		awaited  *engine.ChildAwaitedError
		body     *funchost.BodyError
		state    *durable.StateErrors
		payload  *durable.EventPayloadError
		noEvent  *engine.UnknownEventError
		noCheck  *engine.VersionUnavailableError
		keys     *engine.SearchKeyError
		notKept  *engine.GenerationNotKeptError
	)
	switch {
	case errors.As(err, &pub):
		return pub
	case errors.As(err, &graph):
		return apierror.New(apierror.ErrNotFound, graph.Error())
	case errors.Is(err, engine.ErrRunNotFound):
		return apierror.New(apierror.ErrNotFound, "instance not found")
	case errors.As(err, &invalid):
		return &apierror.Error{Kind: apierror.ErrBadRequest, Message: "invalid request body",
			Fields: []apierror.Field{{Name: "details", Value: invalid.details}}}
	case errors.Is(err, engine.ErrInvalidInstanceID):
		return apierror.New(apierror.ErrBadRequest, "invalid instance_id")
	case errors.Is(err, engine.ErrInvalidEventName):
		return apierror.New(apierror.ErrBadRequest, invalidEventNameMessage)
	case errors.As(err, &keys):
		return searchKeyError(keys)
	case errors.As(err, &state):
		details := make([]apiStateIssue, len(state.Issues))
		for i, is := range state.Issues {
			details[i] = apiStateIssue{Loc: []string{}, Msg: is.Msg}
			if is.Field != "" {
				details[i].Loc = []string{is.Field}
			}
		}
		return &apierror.Error{Kind: apierror.ErrBadRequest, Message: "invalid initial state",
			Fields: []apierror.Field{{Name: "details", Value: details}}}
	case errors.As(err, &notKept):
		return apierror.New(apierror.ErrNotFound, notKept.Error())
	case errors.As(err, &noEvent):
		return apierror.New(apierror.ErrNotFound, noEvent.Error())
	case errors.As(err, &noCheck):
		// This instance lacks the run's graph version (a rolling deploy): it cannot check the
		// event and stored nothing; one that has the version will take it.
		return apierror.New(apierror.ErrBusy, noCheck.Error())
	case errors.As(err, &payload):
		loc := []string{}
		if payload.Field != "" {
			loc = []string{payload.Field}
		}
		return &apierror.Error{Kind: apierror.ErrBadRequest, Message: payload.Error(),
			Fields: []apierror.Field{{Name: "details", Value: []apiStateIssue{{Loc: loc, Msg: payload.Reason}}}}}
	case errors.Is(err, engine.ErrInvalidEventPayload):
		return errEventBodyNotJSON
	case errors.As(err, &query):
		return apierror.New(apierror.ErrBadRequest, query.Error())
	case errors.Is(err, engine.ErrFeedRunReplaced):
		return errFeedRunReplaced
	case errors.Is(err, engine.ErrInvalidQuery):
		// The service checks every other parameter first, so what storage refuses is the token.
		return apierror.New(apierror.ErrBadRequest, errBadToken.Error())
	case errors.As(err, &body):
		return apierror.Unread(body.Message(), errors.Is(body, funchost.ErrBodyTimeout)) // apiReadBody answered a body over the cap already
	case errors.As(err, &exists):
		return runStateError("instance already exists", exists.InstanceID, exists.Status)
	case errors.As(err, &finished):
		return runStateError("instance is not running", finished.InstanceID, finished.Status)
	case errors.As(err, &unfailed):
		return runStateError(unfailed.Error(), unfailed.InstanceID, unfailed.Status)
	case errors.As(err, &noRewind):
		return apierror.New(apierror.ErrConflict, noRewind.Error())
	case errors.As(err, &bodyErr):
		return apierror.New(apierror.ErrBadRequest, bodyErr.msg)
	case errors.As(err, &active):
		return runStateError("instance is still active", active.InstanceID, active.Status)
	case errors.As(err, &awaited):
		return &apierror.Error{Kind: apierror.ErrConflict, Message: "instance is awaited by its parent run", Fields: []apierror.Field{
			{Name: "instance_id", Value: awaited.InstanceID}, {Name: "runtime_status", Value: awaited.Status},
			{Name: "parent_instance_id", Value: awaited.ParentInstanceID}}}
	case errors.Is(err, engine.ErrConflict):
		// Writers on one run kept moving its head: nothing was written; the client retries.
		return apierror.New(apierror.ErrBusy, "instance is busy, retry later")
	}
	return err
}

// runStateError is a 409 naming the run and its status.
func runStateError(msg, id string, status engine.RunStatus) error {
	return &apierror.Error{Kind: apierror.ErrConflict, Message: msg, Fields: []apierror.Field{
		{Name: "instance_id", Value: id}, {Name: "runtime_status", Value: status}}}
}

// RetryAfterBusy is the Retry-After (seconds) of every 503: {"error": "instance is busy,
// retry later"}, a request that lost to other writers on the same run too often
// (engine.ErrConflict), and an event this instance cannot check because it lacks the run's
// graph version (engine.VersionUnavailableError). Neither wrote anything, so sending it again
// is safe (an event with the same Idempotency-Key is stored once).
const RetryAfterBusy = "1"

// handle adapts an endpoint that returns an error to an http.Handler: errors are answered
// through publicError in the apierror.Runs shape, and server errors are logged with their
// cause (never returned).
func (s *Service) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		status, body := apierror.Runs.Reply(publicError(err))
		switch {
		case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", RetryAfterBusy)
			s.logger.WarnContext(r.Context(), "durable request refused: retry later", "method", r.Method, "path", r.URL.Path, "error", err)
		case status >= http.StatusInternalServerError:
			s.logger.ErrorContext(r.Context(), "durable request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		default:
			s.logger.DebugContext(r.Context(), "durable request rejected", "method", r.Method, "path", r.URL.Path, "status", status)
		}
		apierror.WriteJSON(w, status, body)
	})
}

// apiWriteJSON writes v as a json.dumps-style JSON body.
func apiWriteJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		logger.Error("encode durable response", "error", err)
		status, body = http.StatusInternalServerError, apierror.Runs.Internal()
	}
	apierror.WriteJSON(w, status, body)
}
