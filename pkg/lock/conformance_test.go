package lock_test

import (
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/lock/locktest"
)

func TestInProcessThreadLock_Conformance(t *testing.T) {
	locktest.RunThreadLockTests(t, locktest.Shared(func(t *testing.T) lock.ThreadLock {
		return lock.NewInProcessThreadLock()
	}))
}

// The blob lease lock on fake storage: every instance in one subtest shares the storage,
// as two processes share an account.
func TestBlobLeaseThreadLock_FakeStorage_Conformance(t *testing.T) {
	var mu sync.Mutex
	stores := make(map[*testing.T]*lock.FakeLeases)
	locktest.RunThreadLockTests(t, func(t *testing.T) lock.ThreadLock {
		mu.Lock()
		f, ok := stores[t]
		if !ok {
			f = lock.NewFakeLeases()
			stores[t] = f
		}
		mu.Unlock()
		return lock.NewBlobLeaseOnFake(t, f)
	})
}
