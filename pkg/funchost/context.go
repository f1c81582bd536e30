package funchost

import (
	"context"
	"encoding/json"
)

type ctxKey struct{}

// invocationInfo is what the request context carries about the invocation; one value keeps
// the hot path to one context allocation.
type invocationInfo struct {
	id         string
	identities json.RawMessage
}

// WithInvocationID returns a context carrying the host's invocation id.
func WithInvocationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, &invocationInfo{id: id})
}

func withInvocation(ctx context.Context, id string, identities json.RawMessage) context.Context {
	return context.WithValue(ctx, ctxKey{}, &invocationInfo{id: id, identities: identities})
}

// InvocationID returns the invocation id of the request being served: the host's
// X-Azure-Functions-InvocationId, or an id the standalone server made up. It is "" outside a
// request.
func InvocationID(ctx context.Context) string {
	if info, ok := ctx.Value(ctxKey{}).(*invocationInfo); ok {
		return info.id
	}
	return ""
}

// Identities returns the raw claims identities the host sent with an HTTP invocation, or nil.
func Identities(ctx context.Context) json.RawMessage {
	if info, ok := ctx.Value(ctxKey{}).(*invocationInfo); ok {
		return info.identities
	}
	return nil
}
