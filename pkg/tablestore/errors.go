package tablestore

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// serviceError is a table service error reduced to its status and code (the service's
// message text is dropped: it echoes keys and request ids). It unwraps to the engine's
// sentinel for that status, if any.
type serviceError struct {
	Status int
	Code   string
	kind   error
}

func (e *serviceError) Error() string {
	if e.kind != nil {
		return fmt.Sprintf("table service answered %d %s: %v", e.Status, e.Code, e.kind)
	}
	return fmt.Sprintf("table service answered %d %s", e.Status, e.Code)
}

func (e *serviceError) Unwrap() error { return e.kind }

// sentinelFor maps a table service status and error code to the engine's storage errors.
// This is the only place that knows the service's codes.
func sentinelFor(status int, code string) error {
	switch code {
	case "EntityAlreadyExists", "UpdateConditionNotSatisfied", "ConditionNotMet":
		return engine.ErrConflict
	case "ResourceNotFound", "EntityNotFound":
		return engine.ErrNotFound
	case "TableNotFound":
		return nil // a deployment problem, not a missing row
	case "EntityTooLarge", "PropertyValueTooLarge", "RequestBodyTooLarge", "TooManyProperties":
		return engine.ErrTooLarge
	}
	switch status {
	case http.StatusConflict, http.StatusPreconditionFailed:
		return engine.ErrConflict
	case http.StatusNotFound:
		if code == "" {
			return engine.ErrNotFound
		}
	case http.StatusRequestEntityTooLarge:
		return engine.ErrTooLarge
	case http.StatusBadRequest:
		return engine.ErrInvalidEntity
	}
	return nil
}

// classify turns an SDK error into one that wraps the engine's sentinel, without the
// request URL (it may carry a SAS token) or the service's message.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &serviceError{Status: re.StatusCode, Code: re.ErrorCode, kind: sentinelFor(re.StatusCode, re.ErrorCode)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request: %w", ue.Op, ue.Err)
	}
	return err
}
