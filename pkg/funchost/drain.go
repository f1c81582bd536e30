package funchost

import (
	"context"
	"errors"
)

// drainKey is the context key of the drain context of the Server serving a request.
type drainKey struct{}

// UntilDrain returns a copy of ctx that is also cancelled, with cause, once the Server serving
// ctx's request begins to shut down (the context given to Serve ended, or Close). A request that
// holds its answer open waiting on work that lives on without it — a long poll, an event stream
// following a durable run, a join — waits on the copy and, when it ends with cause, answers as at
// its wait bound: the client asks again, of an instance still serving, instead of the shutdown
// waiting up to ShutdownTimeout for it and then cutting its connection. Work the request itself
// runs (a graph run in the request) keeps waiting on ctx: shutdown lets it finish.
//
// For a context no Server gave, the copy ends only with ctx. Call the CancelFunc when done.
func UntilDrain(ctx context.Context, cause error) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(ctx)
	drain, _ := ctx.Value(drainKey{}).(context.Context)
	if drain == nil {
		return out, func() { cancel(context.Canceled) }
	}
	stop := context.AfterFunc(drain, func() { cancel(cause) })
	return out, func() { stop(); cancel(context.Canceled) }
}

// Drained reports whether ctx, from UntilDrain with cause, ended because its server began to
// shut down.
func Drained(ctx context.Context, cause error) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), cause)
}
