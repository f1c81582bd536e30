package locktest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/lock/locktest"
)

// A lock whose instances share nothing is wrapped in Shared, so the suite's two contenders
// are one lock. A storage-backed lock returns a fresh instance per call instead.
func ExampleRunThreadLockTests() {
	_ = func(t *testing.T) {
		locktest.RunThreadLockTests(t, locktest.Shared(func(t *testing.T) lock.ThreadLock {
			return lock.NewInProcessThreadLock()
		}))
	}
}
