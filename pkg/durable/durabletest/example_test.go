package durabletest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durable/durabletest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A backend runs the three suites; the in-memory twins do in their own tests.
func ExampleRunStoreTests() {
	_ = func(t *testing.T) {
		store := memory.NewStore()
		durabletest.RunStoreTests(t, func(*testing.T) durable.Store { return store })
		durabletest.RunQueueTests(t, func(*testing.T) durable.WorkQueue { return memory.NewQueue() })
		durabletest.RunPayloadStoreTests(t, func(*testing.T) durable.PayloadStore { return memory.NewPayloadStore() })
	}
}

// Count storage operations of an engine through the instrumented wrappers.
func ExampleCountingStore() {
	counts := &durabletest.OpCounts{}
	_ = durable.EngineOptions{
		Store:    durabletest.CountingStore{Store: memory.NewStore(), Counts: counts},
		Queue:    durabletest.CountingQueue{WorkQueue: memory.NewQueue(), Counts: counts},
		Payloads: durabletest.CountingPayloads{PayloadStore: memory.NewPayloadStore(), Counts: counts},
	}
}
