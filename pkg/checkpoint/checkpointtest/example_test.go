package checkpointtest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint/checkpointtest"
)

// A backend runs the suite with an empty saver per subtest; the in-memory twin does in its
// own tests.
func ExampleRunSaverTests() {
	_ = func(t *testing.T) {
		checkpointtest.RunSaverTests(t, func(*testing.T) checkpoint.Saver {
			return checkpoint.NewMemory(checkpoint.MemoryOptions{})
		})
	}
}
