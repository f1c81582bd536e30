package runsapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// Continuation tokens. The service hands out the engine's token wrapped with a checksum and
// unwraps what comes back, so that a token it did not issue (junk, truncated, edited) is a 400
// on every storage: left to storage, Azure refuses some junk, Azurite pages from wherever the
// junk points and the in-memory store starts over. The checksum is unkeyed: it catches
// mistakes, and a forged token only pages the runs the caller may list anyway.

// tokenSumSize is the length of the checksum in front of the engine's token.
const tokenSumSize = 8

// tokenDomain separates this checksum from any other use of SHA-256 over the same text.
const tokenDomain = "funcgraph runs api continuation token v1\x00"

func tokenSum(inner string) []byte {
	sum := sha256.Sum256([]byte(tokenDomain + inner))
	return sum[:tokenSumSize]
}

// wrapToken returns the token a client sees for the engine's token ("" stays "").
func wrapToken(inner string) string {
	if inner == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(append(tokenSum(inner), inner...))
}

// unwrapToken returns the engine's token inside a client's token ("" stays ""), or a 400
// naming continuation_token for a token the service did not issue.
func unwrapToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) <= tokenSumSize {
		return "", errBadToken
	}
	inner := string(raw[tokenSumSize:])
	if subtle.ConstantTimeCompare(raw[:tokenSumSize], tokenSum(inner)) != 1 {
		return "", errBadToken
	}
	return inner, nil
}

// errBadToken is a continuation token the service did not issue.
var errBadToken = &apiQueryError{"continuation_token", "want the token of a previous page"}
