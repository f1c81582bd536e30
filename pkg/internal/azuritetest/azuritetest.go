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
