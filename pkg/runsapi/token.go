package runsapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Continuation tokens. The service hands out the engine's token sealed with a MAC and opens
// what comes back, so that a token it did not issue (junk, truncated, edited, minted) is a 400
// on every storage: left to storage, Azure refuses some junk, Azurite pages from wherever the
// junk points and the in-memory store starts over.
//
// The MAC is HMAC-SHA-256 with a key every instance of the app shares and no caller knows: the
// engine's shared key tokenKeyName (engine.Engine.SharedKey: random, created once in the
// run store by whichever instance needs it first, read by every other and kept in memory),
// so a token one instance issued pages on any other, across restarts, and nobody without
// access to the store can mint one. A Runs that keeps no shared keys (a test double) gets a
// random key per Service: its tokens hold within that Service only. The MAC also covers what
// the token pages — GET /api/runs for one caller (under isolation, the identity it was issued
// to; else every caller that sees every run), or one run's history — so a token serves only
// the pages it came from.
//
// Layout: base64url(tokenVersion | the first tokenMACSize bytes of the MAC | engine token).
// A token with an unkeyed checksum in place of the version and MAC is one anyone could have
// minted: it is refused like any other token the service did not issue (400
// continuation_token), and a client starts its listing over without one.

// tokenKeyName names the engine's shared key of continuation tokens.
const tokenKeyName = "runs-api-continuation-token"

// tokenVersion is the first byte of every token; tokenMACSize the length of its MAC.
const (
	tokenVersion = 2
	tokenMACSize = 16
)

// tokenDomain separates this MAC from any other use of the same key.
const tokenDomain = "funcgraph runs api continuation token v2\x00"

// keySource is what the service needs of a Runs that keeps shared keys (engine.Engine does).
type keySource interface {
	SharedKey(ctx context.Context, name string) ([]byte, error)
}

var _ keySource = (*engine.Engine)(nil)

// newLocalTokenKey returns the random key of a Service whose Runs keeps no shared keys.
func newLocalTokenKey() []byte {
	k := make([]byte, engine.SharedKeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// tokenKey returns the key of continuation tokens. Errors: the Runs' storage error.
func (s *Service) tokenKey(ctx context.Context) ([]byte, error) {
	if ks, ok := s.runs.(keySource); ok {
		return ks.SharedKey(ctx, tokenKeyName)
	}
	return s.localTokenKey, nil
}

func tokenMAC(key []byte, scope, inner string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenDomain))
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write([]byte(inner))
	return m.Sum(nil)[:tokenMACSize]
}

// listScope is what a continuation token of GET /api/runs is bound to: the caller's identity
// when isolation scopes the listing to it, else every caller that sees every run.
func (s *Service) listScope(ctx context.Context) string {
	if c := s.caller(ctx); !c.Admin {
		return "runs\x00owner\x00" + c.ID
	}
	return "runs"
}

// historyScope is what a continuation token of GET /api/runs/{id}/history is bound to.
func historyScope(runID string) string { return "history\x00" + runID }

// sealToken returns the token a client sees for the engine's token inner in scope, or nil
// for "" (the last page). Errors: the key's storage error.
func (s *Service) sealToken(ctx context.Context, scope, inner string) (*string, error) {
	if inner == "" {
		return nil, nil
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, 1+tokenMACSize+len(inner))
	raw = append(raw, tokenVersion)
	raw = append(raw, tokenMAC(key, scope, inner)...)
	raw = append(raw, inner...)
	tok := base64.RawURLEncoding.EncodeToString(raw)
	return &tok, nil
}

// openToken returns the engine's token inside a client's token tok issued in scope ("" stays
// ""). Errors: errBadToken (400 continuation_token) for a token the service did not issue in
// scope; the key's storage error.
func (s *Service) openToken(ctx context.Context, scope, tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) <= 1+tokenMACSize || raw[0] != tokenVersion {
		return "", errBadToken
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return "", err
	}
	inner := string(raw[1+tokenMACSize:])
	if !hmac.Equal(raw[1:1+tokenMACSize], tokenMAC(key, scope, inner)) {
		return "", errBadToken
	}
	return inner, nil
}

// errBadToken is a continuation token the service did not issue.
var errBadToken = &apiQueryError{"continuation_token", tokenWant}

// tokenWant is what a client that sent a token the service did not issue is told.
const tokenWant = "want the token of a previous page, or none to start over"
