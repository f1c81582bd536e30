package host

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// InputError is what a graph returns (from Invoke, or from Stream before it emits anything)
// when the input passes the host's checks but not the graph's own: the caller gets 422 with
// `Validation error: <Field>: <Message>`, like the host's request-model errors, instead of 500
// "Graph execution failed". Message must be safe to show a caller.
type InputError struct {
	// Field names the offending input, e.g. "input.messages".
	Field string
	// Message says what is wrong, e.g. "Input should be a valid list".
	Message string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid input: %s: %s", e.Field, e.Message) }

// ClientError is what a graph returns (from Invoke, or from Stream before it emits anything)
// to say "the client is wrong" with any 4xx status: the caller gets Status with
// `{"error":"error","detail":"<Message>"}` instead of 500 "Graph execution failed". Message
// must be safe to show a caller; Err, the cause, is logged by observers (its type only), never
// sent. A Status outside 400–499 answers 400.
type ClientError struct {
	// Status is the HTTP status, 400–499 (e.g. http.StatusNotFound, http.StatusConflict).
	Status int
	// Message is the public message, the response's detail.
	Message string
	// Err is the underlying cause, if any; it is never sent.
	Err error
}

func (e *ClientError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("client error %d: %s: %v", e.Status, e.Message, e.Err)
	}
	return fmt.Sprintf("client error %d: %s", e.Status, e.Message)
}

// Unwrap returns the cause.
func (e *ClientError) Unwrap() error { return e.Err }

// clientError turns a graph's InputError or ClientError into the public error answered to the
// caller, and a write the in-memory stores' byte budget refused (a checkpoint) into its 507
// (apierror.StorageFull), or returns nil for any other error (a 500).
func clientError(err error) error {
	if err == nil {
		return nil
	}
	if full := apierror.StorageFull(err); full != nil {
		return full
	}
	var inputErr *InputError
	if errors.As(err, &inputErr) {
		return apierror.Invalid(inputErr.Field, inputErr.Message)
	}
	var ce *ClientError
	if errors.As(err, &ce) {
		status := ce.Status
		if status < http.StatusBadRequest || status > 499 {
			status = http.StatusBadRequest
		}
		return &apierror.Error{Kind: apierror.ErrBadRequest, Status: status, Message: ce.Message}
	}
	return nil
}

// ClientStatus reports how the hosting routes answer a graph error that blames the client: the
// status and public message of an *InputError (422), a *ClientError (its 4xx) or a refusal of
// the in-memory stores' byte budget (507, apierror.StorageFull). ok is false
// for any other error, which callers answer as a 500 without its text. Other surfaces that run
// hosted graphs (the platform API) use it to answer the same way.
func ClientStatus(err error) (status int, message string, ok bool) {
	ce := clientError(err)
	if ce == nil {
		return 0, "", false
	}
	return apierror.Status(ce), ce.Error(), true
}
