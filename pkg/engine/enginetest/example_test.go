package enginetest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A backend runs the three suites; the in-memory twins do in their own tests.
func ExampleRunStoreTests() {
	_ = func(t *testing.T) {
		store := memory.NewStore()
		enginetest.RunStoreTests(t, func(*testing.T) engine.Store { return store })
		enginetest.RunQueueTests(t, func(*testing.T) engine.WorkQueue { return memory.NewQueue() })
		enginetest.RunPayloadStoreTests(t, func(*testing.T) engine.PayloadStore { return memory.NewPayloadStore() })
	}
}

// Count storage operations of an engine through the instrumented wrappers.
func ExampleCountingStore() {
	counts := &enginetest.OpCounts{}
	_ = engine.EngineOptions{
		Store:    enginetest.CountingStore{Store: memory.NewStore(), Counts: counts},
		Queue:    enginetest.CountingQueue{WorkQueue: memory.NewQueue(), Counts: counts},
		Payloads: enginetest.CountingPayloads{PayloadStore: memory.NewPayloadStore(), Counts: counts},
	}
}
