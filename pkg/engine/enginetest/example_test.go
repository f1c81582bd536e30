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

// A backend's store runs the search-key suite: an engine over it starts runs with keys and
// lists them by key, counting the store's operations.
func ExampleRunSearchKeyTests() {
	_ = func(t *testing.T) {
		enginetest.RunSearchKeyTests(t, func(*testing.T) engine.Store { return memory.NewStore() })
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

// A backend's live store runs the suite; a backend whose appends are network calls lowers its
// append limit for the test with its own option and says so in LiveSuiteOptions.
func ExampleRunLiveStoreTests() {
	_ = func(t *testing.T) {
		live := memory.NewLiveStore()
		enginetest.RunLiveStoreTests(t, func(*testing.T) engine.LiveStore { return live }, enginetest.LiveSuiteOptions{})
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

// Lose the reply of a batch the way the Azure SDK sees it: the batch is applied, the SDK's
// retry of the same request meets it, and the caller gets the retry's answer.
func ExampleFaultStore() {
	store := enginetest.FaultStore{Store: memory.NewStore()}
	store.LoseReply = func([]engine.Op) bool { return true }
	ctx := context.Background()
	_, err := store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "run", RowKey: "r"}}})
	_, getErr := store.Get(ctx, "run", "r")
	fmt.Println(errors.Is(err, engine.ErrConflict), getErr == nil)
	// Output: true true
}

// Queue a work item twice and report the enqueue failed: a lost reply whose retries did
// not get an answer either.
func ExampleFaultQueue() {
	q := memory.NewQueue()
	fq := enginetest.FaultQueue{WorkQueue: q}
	fq.OnEnqueue = func([]byte) (int, error) { return 2, nil }
	fq.AfterEnqueue = func([]byte) error { return enginetest.ErrInjected }
	err := fq.Enqueue(context.Background(), []byte(`{}`), 0)
	fmt.Println(errors.Is(err, enginetest.ErrInjected), q.Len())
	// Output: true 2
}
