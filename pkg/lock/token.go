package lock

import (
	"crypto/rand"
	"encoding/hex"
)

// NewToken returns a random owner token of 32 lowercase hex characters, as ThreadLock.Acquire
// hands out (for implementations of ThreadLock).
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+).
	return hex.EncodeToString(b[:])
}
