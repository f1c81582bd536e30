package runsclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Sentinels a *Error matches with errors.Is, by its status.
var (
	// ErrBadRequest: 400, the request was refused as sent and changed nothing.
	ErrBadRequest = errors.New("runsclient: bad request")
	// ErrUnauthorized: 401 or 403, a missing or wrong key, or an identity refused.
	ErrUnauthorized = errors.New("runsclient: unauthorized")
	// ErrNotFound: 404, an unknown run, graph or version (or another identity's run).
	ErrNotFound = errors.New("runsclient: not found")
	// ErrConflict: 409, the run is not in a state the request needs (it exists, is finished,
	// is still active, is not Failed).
	ErrConflict = errors.New("runsclient: conflict")
	// ErrBusy: 429 or 503 after the retries, nothing written: try again later.
	ErrBusy = errors.New("runsclient: busy")
)

// Error is an answer of the API that is not a success.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the body's "error" member (for an answer without one, its status text).
	Message string
	// Fields are the body's other members, as sent: "instance_id", "runtime_status",
	// "details", "parent_instance_id", ….
	Fields map[string]json.RawMessage
	// RetryAfter is the answer's Retry-After (0 without one).
	RetryAfter time.Duration
	// Method and Path name the request (the path without the query).
	Method, Path string
}

// Error reads "runsclient: <method> <path>: <status> <message>".
func (e *Error) Error() string {
	msg := fmt.Sprintf("runsclient: %s %s: %d %s", e.Method, e.Path, e.StatusCode, e.Message)
	if d, ok := e.Fields["details"]; ok {
		if len(d) > maxDetailsShown {
			d = append(d[:maxDetailsShown:maxDetailsShown], "…"...)
		}
		msg += " (details: " + string(d) + ")"
	}
	return msg
}

// maxDetailsShown bounds the "details" an error text repeats.
const maxDetailsShown = 300

// Is matches the sentinel of the error's status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrBusy:
		return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable
	}
	return false
}

// Field decodes the body member name into v; it reports false when the body has none or it
// does not decode.
func (e *Error) Field(name string, v any) bool {
	raw, ok := e.Fields[name]
	return ok && json.Unmarshal(raw, v) == nil
}

// RuntimeStatus is the "runtime_status" member of a 409 (the run's status), or "".
func (e *Error) RuntimeStatus() Status {
	var s Status
	e.Field("runtime_status", &s)
	return s
}

// readError reads a failed answer into a *Error and closes its body.
func readError(res *http.Response, method, path string) *Error {
	defer res.Body.Close()
	e := &Error{StatusCode: res.StatusCode, Method: method, Path: path,
		RetryAfter: parseRetryAfter(res.Header.Get("Retry-After"), time.Now())}
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var body map[string]json.RawMessage
	if json.Unmarshal(data, &body) == nil {
		if raw, ok := body["error"]; ok {
			var msg string
			if json.Unmarshal(raw, &msg) == nil {
				e.Message = msg
				delete(body, "error")
			}
		}
		if len(body) > 0 {
			e.Fields = body
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// UnknownOutcomeError is a request that may have been carried out although its answer never
// came (the connection failed after it was sent), which the client does not send again
// because doing it twice could do it twice: a start, cancel, rewind or purge. Read the run
// (Status) to learn what happened.
type UnknownOutcomeError struct {
	Method, Path string
	// Err is the transport's failure.
	Err error
}

// Error says the request may have been carried out.
func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("%v (the request may have been carried out: read the run to know)", e.Err)
}

// Unwrap returns the transport's failure.
func (e *UnknownOutcomeError) Unwrap() error { return e.Err }
