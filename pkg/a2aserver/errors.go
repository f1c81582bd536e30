package a2aserver

import (
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// JSON-RPC 2.0 and A2A v1.0 error codes.
const (
	CodeParseError                   = -32700
	CodeInvalidRequest               = -32600
	CodeMethodNotFound               = -32601
	CodeInvalidParams                = -32602
	CodeInternalError                = -32603
	CodeTaskNotFound                 = -32001
	CodeTaskNotCancelable            = -32002
	CodePushNotificationNotSupported = -32003
	CodeUnsupportedOperation         = -32004
	CodeContentTypeNotSupported      = -32005
	CodeExtendedCardNotConfigured    = -32007
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

func rpcErr(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	errTaskNotFound  = &Error{Code: CodeTaskNotFound, Message: "task not found"}
	errPushNotifying = &Error{Code: CodePushNotificationNotSupported, Message: "push notifications are not supported"}
)

// rpcError turns what a method returned into the error object answered: its own *Error as
// it is, the engine's errors by kind, anything else an internal error (logged by the
// caller, never shown).
func rpcError(err error) (e *Error, internal bool) {
	var rerr *Error
	var fin *engine.RunFinishedError
	switch {
	case errors.As(err, &rerr):
		return rerr, false
	case apierror.StorageFull(err) != nil:
		return rpcErr(CodeInternalError, "%s", apierror.StorageFull(err).Error()), false
	case errors.Is(err, engine.ErrRunNotFound):
		return errTaskNotFound, false
	case errors.As(err, &fin):
		return rpcErr(CodeTaskNotCancelable, "task is in a terminal state (%s)", taskState(fin.Status, false)), false
	case errors.Is(err, engine.ErrInvalidQuery):
		return rpcErr(CodeInvalidParams, "invalid params: %v", err), false
	case errors.As(err, new(*durable.EventPayloadError)), errors.As(err, new(*engine.UnknownEventError)):
		return rpcErr(CodeInvalidParams, "invalid params: the message is not an answer the task takes: %v", err), false
	case errors.As(err, new(*engine.VersionUnavailableError)):
		return rpcErr(CodeInternalError, "the task's graph version is not on this instance (a deploy is rolling): send the message again"), false
	case errors.Is(err, engine.ErrInvalidEventPayload):
		return rpcErr(CodeInvalidParams, "invalid params: the message is not an event the task accepts: %v", err), false
	}
	return &Error{Code: CodeInternalError, Message: "internal error"}, true
}
