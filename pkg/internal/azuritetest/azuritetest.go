// Package azuritetest gives integration tests the Azurite connection that `make test` starts
// (ConnectionString), and an Azurite of their own over HTTPS with OAuth (StartOAuth), for
// identity-based settings, which the shared plain-HTTP Azurite cannot serve.
//
// Integration tests carry the build tag `integration` and a name containing "Integration".
// They never skip: without FUNCGRAPH_TEST_STORAGE (or FUNCGRAPH_TEST_AZURITE_BIN) they fail, so
// a broken Azurite start can not pass as green.
package azuritetest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// EnvConnectionString names the variable holding the Azurite connection string.
const EnvConnectionString = "FUNCGRAPH_TEST_STORAGE"

// ConnectionString returns the Azurite connection string for integration tests, failing the
// test when it is not set.
func ConnectionString(t testing.TB) string {
	t.Helper()
	cs := os.Getenv(EnvConnectionString)
	if cs == "" {
		t.Fatalf("%s is not set: run integration tests through `make test` (it starts Azurite)", EnvConnectionString)
	}
	return cs
}

// UniqueName returns prefix followed by random lowercase hex, usable as a container, queue or
// (with an alphabetic prefix) table name. Tests use it to stay out of each other's way on one
// shared Azurite.
func UniqueName(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return strings.ToLower(prefix) + hex.EncodeToString(b[:])
}
