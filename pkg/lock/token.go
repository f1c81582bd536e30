package lock

import (
	"crypto/rand"
	"encoding/hex"
)

// newToken returns a random owner token of 32 lowercase hex characters.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+).
	return hex.EncodeToString(b[:])
}
