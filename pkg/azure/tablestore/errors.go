package tablestore

import (
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// serviceError is a table service error reduced to its status and code (the service's
// message text is dropped: it echoes keys and request ids). It unwraps to the engine's
// sentinel for that answer, if any.
type serviceError = azsdk.ServiceError

// sentinelFor maps the kind of a table service answer to the engine's storage errors.
// This is the only place that knows what the engine makes of them.
func sentinelFor(k azsdk.Kind) error {
	switch k {
	case azsdk.AlreadyExists, azsdk.PreconditionFailed, azsdk.Conflict:
		return engine.ErrConflict
	case azsdk.NotFound:
		return engine.ErrNotFound // not ParentNotFound: a missing table is a deployment problem
	case azsdk.TooLarge:
		return engine.ErrTooLarge
	case azsdk.BadRequest:
		return engine.ErrInvalidEntity
	}
	return nil
}

// classify turns an SDK error into one that wraps the engine's sentinel, without the
// request URL (it may carry a SAS token) or the service's message.
func classify(err error) error { return azsdk.Reduce("table", err, sentinelFor) }

// answerError is the error of one sub-response of a batch reply.
func answerError(status int, code string) *serviceError {
	return azsdk.NewServiceError("table", status, code, sentinelFor)
}
