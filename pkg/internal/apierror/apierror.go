package apierror

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// The kinds of failure, one per HTTP status that Status answers. An error of none of them is
// a 500.
var (
	ErrBadRequest      = errors.New("bad request")            // 400
	ErrUnauthorized    = errors.New("unauthorized")           // 401
	ErrForbidden       = errors.New("forbidden")              // 403
	ErrNotFound        = errors.New("not found")              // 404
	ErrRequestTimeout  = errors.New("request body timed out") // 408
	ErrConflict        = errors.New("conflict")               // 409
	ErrTooLarge        = errors.New("request body too large") // 413
	ErrValidation      = errors.New("validation error")       // 422
	ErrTooManyRequests = errors.New("too many requests")      // 429
	ErrInternal        = errors.New("internal error")         // 500
	ErrNotImplemented  = errors.New("not implemented")        // 501
	ErrBusy            = errors.New("busy, retry later")      // 503
	ErrWaitExceeded    = errors.New("wait bound passed")      // 504
	ErrStorageFull     = errors.New("insufficient storage")   // 507
)

// Status is the one place where an error of the HTTP surfaces becomes an HTTP status: the
// explicit Status of an *Error when it has one, else the status of the kind err is (through
// any wrapping, NewKind sentinels included), else 500.
func Status(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return e.Status
	}
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrRequestTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrValidation):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrTooManyRequests):
		return http.StatusTooManyRequests
	case errors.Is(err, ErrNotImplemented):
		return http.StatusNotImplemented
	case errors.Is(err, ErrBusy):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrWaitExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, ErrStorageFull), errors.Is(err, membudget.ErrExceeded):
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

// Error is a failure whose Message is safe to show a caller: the body's message in every
// shape. It unwraps to Kind, so errors.Is branches on the kind or on a NewKind sentinel.
type Error struct {
	// Kind is one of the kinds, or a sentinel made by NewKind.
	Kind error
	// Status, when not 0, is the HTTP status instead of Kind's: a graph's own 4xx.
	Status int
	// Message is the public text.
	Message string
	// Fields are members written after the message, in order, by the Runs shape.
	Fields []Field
}

// Field is one extra member of an error body.
type Field struct {
	Name  string
	Value any
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

// New returns an *Error of kind with message msg.
func New(kind error, msg string) error { return &Error{Kind: kind, Message: msg} }

// Newf returns an *Error of kind with the formatted message.
func Newf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Message returns err's public message and true when err is (or wraps) an *Error.
func Message(err error) (string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Message, true
	}
	return "", false
}

// NewKind returns a sentinel with text that is a case of kind: Status answers it as kind, and
// errors.Is tells it from the kind's other cases.
func NewKind(kind error, text string) error { return &subKind{text: text, kind: kind} }

type subKind struct {
	text string
	kind error
}

func (k *subKind) Error() string { return k.text }
func (k *subKind) Unwrap() error { return k.kind }

// WaitExceededMessage is the message of the answer to a request whose graph run passed the
// wait bound and goes on without it.
func WaitExceededMessage(bound time.Duration) string {
	return "Graph run did not finish within " + waitbound.Seconds(bound) + "; it goes on in the background"
}

// WaitExceeded is the error answering a request whose graph run passed the wait bound: 504
// with WaitExceededMessage.
func WaitExceeded(bound time.Duration) error {
	return &Error{Kind: ErrWaitExceeded, Message: WaitExceededMessage(bound)}
}

// Unread is the error answering a request body that could not be read, with message (a
// funchost.BodyError's): 408 when it did not arrive in time, else 400 (a body over the cap
// included, as the hosting and platform routes answer it; the runs API answers that one 413
// with a text of its own).
func Unread(message string, timedOut bool) error {
	if timedOut {
		return New(ErrRequestTimeout, message)
	}
	return New(ErrBadRequest, message)
}

// Messages refusing a request whose caller per-user isolation cannot resolve, on the hosting
// and platform routes (the runs API words its own in lower case).
const (
	NoIdentityMessage      = "Unauthorized: the request carries no caller identity"
	UntrustedPeerMessage   = "Forbidden: the identity header is only accepted from a trusted proxy"
	InvalidIdentityMessage = "Bad request: the caller identity must be at most 512 bytes of UTF-8 without control characters or whitespace other than spaces"
)

// UnresolvedCaller is the error refusing a request whose caller per-user isolation could not
// resolve, by the kind of err (package isolation's errors are each a case of one): 403
// UntrustedPeerMessage for an identity header from a peer that is not a trusted proxy, 400
// InvalidIdentityMessage for an identity that cannot be used as sent, else 401
// NoIdentityMessage.
func UnresolvedCaller(err error) error {
	switch {
	case errors.Is(err, ErrForbidden):
		return New(ErrForbidden, UntrustedPeerMessage)
	case errors.Is(err, ErrBadRequest):
		return New(ErrBadRequest, InvalidIdentityMessage)
	}
	return New(ErrUnauthorized, NoIdentityMessage)
}

// Invalid is the 422 of a request member that breaks the request model:
// `Validation error: <field>: <message>`.
func Invalid(field, message string) error {
	return New(ErrValidation, "Validation error: "+field+": "+message)
}

// GraphFailed answers a graph run that failed without blaming the client: 500 with a fixed
// text (the failure itself is logged, never sent).
var GraphFailed = New(ErrInternal, "Graph execution failed")

// Messages of StorageFull: the in-memory stores' byte budget refused new work, of the
// caller's identity or of every identity together.
const (
	StorageFullMessage         = "Insufficient storage: the server's memory budget is used up; retry once finished runs or threads are deleted"
	IdentityStorageFullMessage = "Insufficient storage: your identity's share of the server's memory budget is used up; delete finished runs or threads, or retry once they are purged"
)

// StorageFull returns the 507 that answers a write the in-memory stores' byte budget refused
// (a *membudget.ExceededError anywhere in err's chain), or nil when err is not one. Nothing
// was written: the caller may retry once room is made.
func StorageFull(err error) error {
	var ex *membudget.ExceededError
	if !errors.As(err, &ex) {
		return nil
	}
	if ex.Owner != "" {
		return New(ErrStorageFull, IdentityStorageFullMessage)
	}
	return New(ErrStorageFull, StorageFullMessage)
}
