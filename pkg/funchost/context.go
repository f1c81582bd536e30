package funchost

import (
	"context"
	"encoding/json"
)

type ctxKey int

const (
	invocationIDKey ctxKey = iota
	identitiesKey
)

// WithInvocationID returns a context carrying the host's invocation id.
func WithInvocationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, invocationIDKey, id)
}

// InvocationID returns the invocation id of the request being served: the host's
// X-Azure-Functions-InvocationId, or an id the standalone server made up. It is "" outside a
// request.
func InvocationID(ctx context.Context) string {
	id, _ := ctx.Value(invocationIDKey).(string)
	return id
}

// Identities returns the raw claims identities the host sent with an HTTP invocation, or nil.
func Identities(ctx context.Context) json.RawMessage {
	v, _ := ctx.Value(identitiesKey).(json.RawMessage)
	return v
}
