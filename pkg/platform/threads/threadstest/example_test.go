package threadstest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

// A backend runs the suite with an empty store per subtest; Options tunes it to the
// backend's limits (the zero value for a store without a record size limit).
func ExampleRunStoreTests() {
	_ = func(t *testing.T) {
		threadstest.RunStoreTests(t, func(*testing.T) threads.Store { return threads.NewMemory() }, threadstest.Options{})
	}
}
