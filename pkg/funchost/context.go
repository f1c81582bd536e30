package funchost

import (
	"context"
	"encoding/json"
	"time"
)

type ctxKey struct{}

// invocationInfo is what the request context carries about the invocation; one value keeps
// the hot path to one context allocation.
type invocationInfo struct {
	id         string
	identities json.RawMessage
	source     Source
	level      KeyLevel  // standalone only: what the presented key resolved to
	proxied    bool      // the host proxied the caller's own request (enableProxyingHttpRequest)
	deadline   time.Time // proxied: when functionTimeout ends the invocation (zero: never)
}

// Source is where a request being served came from.
type Source uint8

// Request sources.
const (
	// SourceUnknown is a context this package did not build (WithInvocationID, or outside a
	// request).
	SourceUnknown Source = iota
	// SourceHost is a request the Functions host sent: an HTTP invocation of the
	// custom-handler protocol, or a request it forwarded or proxied.
	SourceHost
	// SourceStandalone is a request the standalone server (Standalone) received directly
	// from its peer; (*http.Request).RemoteAddr is that peer.
	SourceStandalone
)

// WithInvocationID returns a context carrying the host's invocation id.
func WithInvocationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, &invocationInfo{id: id})
}

func withInvocation(ctx context.Context, id string, identities json.RawMessage) context.Context {
	return &invocationContext{ctx, invocationInfo{id: id, identities: identities, source: SourceHost}}
}

func withStandaloneInvocation(ctx context.Context, id string, level KeyLevel) context.Context {
	return &invocationContext{ctx, invocationInfo{id: id, source: SourceStandalone, level: level}}
}

// invocationContext is context.WithValue(ctx, ctxKey{}, &info) in one allocation, not two.
type invocationContext struct {
	context.Context
	info invocationInfo
}

// Value returns the invocation's info for ctxKey{}, and ctx's value for any other key.
func (c *invocationContext) Value(key any) any {
	if key == (ctxKey{}) {
		return &c.info
	}
	return c.Context.Value(key)
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

// invocationIdentities returns the raw claims identities the host sent with an HTTP invocation, or nil.
func invocationIdentities(ctx context.Context) json.RawMessage {
	if info, ok := ctx.Value(ctxKey{}).(*invocationInfo); ok {
		return info.identities
	}
	return nil
}

// RequestSource reports where the request being served came from.
func RequestSource(ctx context.Context) Source {
	if info, ok := ctx.Value(ctxKey{}).(*invocationInfo); ok {
		return info.source
	}
	return SourceUnknown
}

// Proxied reports whether the request being served is a caller's own request that the
// Functions host proxied to the handler (customHandler.enableProxyingHttpRequest,
// HandlerOptions.Proxying): its response reaches the caller as it is written, as on the
// standalone server, rather than whole once the handler is done. The host's invocation lasts
// until the response is complete, so it must end before deadline (the request's arrival plus
// functionTimeout; zero when none applies), past which the host restarts the whole handler
// process. RequestSource is SourceHost for such a request.
func Proxied(ctx context.Context) (deadline time.Time, ok bool) {
	if info, ok := ctx.Value(ctxKey{}).(*invocationInfo); ok && info.proxied {
		return info.deadline, true
	}
	return time.Time{}, false
}

// CallerLevel returns the key level the request being served was authorised with: on the
// standalone server what its presented key resolved to (also on an anonymous route, when it
// carried a key); under the Functions host the auth-level claim of the invocation's
// Identities. It is KeyLevelNone when no key resolved, for a forwarded or proxied request
// (the host sends no identities with those) and outside a request. It decodes the
// identities on every call: call it once per request, and only when needed.
func CallerLevel(ctx context.Context) KeyLevel {
	info, ok := ctx.Value(ctxKey{}).(*invocationInfo)
	if !ok {
		return KeyLevelNone
	}
	if info.source == SourceStandalone {
		return info.level
	}
	return authLevelClaim(info.identities)
}

// claimAuthLevel is the claim type of the host's auth level (WebJobsAuthLevel identities).
const claimAuthLevel = "http://schemas.microsoft.com/2017/07/functions/claims/authlevel"

// authLevelClaim returns the highest auth-level claim of serialized claims identities.
func authLevelClaim(identities json.RawMessage) KeyLevel {
	if len(identities) == 0 {
		return KeyLevelNone
	}
	var ids []struct {
		Claims []struct {
			Type, Value string
		}
	}
	if json.Unmarshal(identities, &ids) != nil {
		return KeyLevelNone
	}
	best := KeyLevelNone
	for _, id := range ids {
		for _, c := range id.Claims {
			if c.Type != claimAuthLevel {
				continue
			}
			switch lvl := KeyLevel(c.Value); lvl {
			case KeyLevelAdmin:
				return lvl
			case KeyLevelFunction, KeyLevelSystem:
				best = lvl
			}
		}
	}
	return best
}
