package bloblock_test

import (
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure/bloblock"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/lock/locktest"
)

// The blob lease lock on fake storage: every instance in one subtest shares the storage,
// as two processes share an account.
func TestBlobLeaseThreadLock_FakeStorage_Conformance(t *testing.T) {
	var mu sync.Mutex
	stores := make(map[*testing.T]*bloblock.FakeLeases)
	locktest.RunThreadLockTests(t, func(t *testing.T) lock.ThreadLock {
		mu.Lock()
		f, ok := stores[t]
		if !ok {
			f = bloblock.NewFakeLeases()
			stores[t] = f
		}
		mu.Unlock()
		return bloblock.NewBlobLeaseOnFake(t, f)
	})
}
