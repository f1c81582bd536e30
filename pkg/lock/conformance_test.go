package lock_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/lock/locktest"
)

func TestInProcessThreadLock_Conformance(t *testing.T) {
	locktest.RunThreadLockTests(t, locktest.Shared(func(t *testing.T) lock.ThreadLock {
		return lock.NewInProcessThreadLock()
	}))
}
