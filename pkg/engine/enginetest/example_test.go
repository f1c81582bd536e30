package enginetest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A backend's store runs the suite; stores returned within one test may share storage.
func ExampleRunStoreTests() {
	_ = func(t *testing.T) {
		store := memory.NewStore()
		enginetest.RunStoreTests(t, func(*testing.T) engine.Store { return store })
	}
}

// A backend's queue runs the suite with a fresh, empty queue per subtest.
func ExampleRunWorkQueueTests() {
	_ = func(t *testing.T) {
		enginetest.RunWorkQueueTests(t, func(*testing.T) engine.WorkQueue { return memory.NewQueue() })
	}
}

// A backend's payload store runs the suite; stores may share storage.
func ExampleRunPayloadStoreTests() {
	_ = func(t *testing.T) {
		enginetest.RunPayloadStoreTests(t, func(*testing.T) engine.PayloadStore { return memory.NewPayloadStore() })
	}
}

// Count storage operations of an engine through the instrumented wrappers.
func ExampleCountingStore() {
	counts := &enginetest.OpCounts{}
	_ = engine.Options{
		Store:    enginetest.CountingStore{Store: memory.NewStore(), Counts: counts},
		Queue:    enginetest.CountingQueue{WorkQueue: memory.NewQueue(), Counts: counts},
		Payloads: enginetest.CountingPayloads{PayloadStore: memory.NewPayloadStore(), Counts: counts},
	}
}

// Take an engine's storage down and bring it back: every operation fails in between.
func ExampleOutage() {
	var outage enginetest.Outage
	opts := engine.Options{
		Store:    outage.Store(memory.NewStore()),
		Queue:    outage.Queue(memory.NewQueue()),
		Payloads: outage.Payloads(memory.NewPayloadStore()),
	}
	outage.Begin()
	_, err := opts.Store.Get(context.Background(), "run-1", "r")
	fmt.Println(errors.Is(err, enginetest.ErrUnavailable))
	outage.End()
	_, err = opts.Store.Get(context.Background(), "run-1", "r")
	fmt.Println(errors.Is(err, engine.ErrNotFound))
	// Output:
	// true
	// true
}
