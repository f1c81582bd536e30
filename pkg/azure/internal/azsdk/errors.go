package azsdk

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// ServiceError is a storage service's answer reduced to its status and code: the service's
// message (it may echo keys and request ids) and the request URL (it may carry a SAS token)
// are dropped. It unwraps to Sentinel, the backend's own contract error for the answer.
type ServiceError struct {
	// Service names the service in the message: "table", "blob", "queue" or "storage".
	Service string
	Answer
	// Sentinel is what the backend maps Kind to (nil: nothing its contract names).
	Sentinel error
}

// Error reads "<service> service answered <status> <code>", then ": <sentinel>" if any.
func (e *ServiceError) Error() string {
	if e.Sentinel != nil {
		return fmt.Sprintf("%s service answered %d %s: %v", e.Service, e.Status, e.Code, e.Sentinel)
	}
	return fmt.Sprintf("%s service answered %d %s", e.Service, e.Status, e.Code)
}

// Unwrap returns the sentinel.
func (e *ServiceError) Unwrap() error { return e.Sentinel }

// NewServiceError returns the error of one answer given as status and code (as a table
// batch reply carries them), with Sentinel set to sentinel(kind) when sentinel is not nil.
func NewServiceError(service string, status int, code string, sentinel func(Kind) error) *ServiceError {
	e := &ServiceError{Service: service, Answer: Answer{Status: status, Code: code, Kind: kindOf(status, code)}}
	if sentinel != nil {
		e.Sentinel = sentinel(e.Kind)
	}
	return e
}

// Reduce returns err fit to return to callers: a service answer becomes a *ServiceError
// (see NewServiceError), a transport error keeps its operation and cause but not its URL;
// other errors, and nil, are returned unchanged.
func Reduce(service string, err error, sentinel func(Kind) error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return NewServiceError(service, re.StatusCode, re.ErrorCode, sentinel)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request: %w", ue.Op, ue.Err)
	}
	return err
}

// Summary describes err in a few words for logs: "status=<status> code=<code>" for a
// service answer, "timeout", "canceled", or "transport error (<type>)"; never a URL.
func Summary(err error) string {
	if a := Classify(err); a.Status != 0 {
		return fmt.Sprintf("status=%d code=%s", a.Status, a.Code)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return fmt.Sprintf("transport error (%T)", err)
}
