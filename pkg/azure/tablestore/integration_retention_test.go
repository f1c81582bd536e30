//go:build integration

package tablestore_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// driveQueue handles the work items of queue with e until it is empty.
func driveQueue(t *testing.T, e *engine.Engine, queue engine.WorkQueue) {
	t.Helper()
	for range 1000 {
		msgs, err := queue.Receive(context.Background(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		if err := e.HandleWorkItem(t.Context(), msgs[0].Body, msgs[0].DequeueCount); err == nil {
			_ = queue.Delete(t.Context(), msgs[0])
		}
	}
	t.Fatal("queue never drained")
}

// TestIntegrationRetention_MaxAge_PurgesOnlyOldFinishedRuns: on Azure Table storage, the
// repair pass with a retention age purges the finished runs that finished before it — by the
// table service's timestamps, so the test waits the age out — from the run index, and keeps a
// waiting run of the same age and the newer finished runs.
func TestIntegrationRetention_MaxAge_PurgesOnlyOldFinishedRuns(t *testing.T) {
	t.Parallel()
	const maxAge = 5 * time.Second // long enough that a loaded machine drives and sweeps new-0 within it
	reg := runsapitest.Registry(t, examples.All)
	queue := memory.NewQueue()
	e, err := engine.New(engine.Options{Registry: reg, Store: tablestore.New(newTable(t)), Queue: queue,
		Payloads: memory.NewPayloadStore(), Retention: engine.Retention{MaxAge: maxAge}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	start := func(graph, id, input string) {
		t.Helper()
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: []byte(input)}); err != nil {
			t.Fatal(err)
		}
	}
	drive := func() { driveQueue(t, e, queue) }
	for i := range 6 {
		start("data_pipeline", fmt.Sprintf("old-%d", i), `{"source_url":"u"}`)
	}
	start("support_agent", "old-waiting", `{"user_message":"refund"}`)
	drive()
	time.Sleep(maxAge + time.Second)
	start("data_pipeline", "new-0", `{"source_url":"u"}`)
	drive()
	if _, err := e.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := e.GetRun(ctx, fmt.Sprintf("old-%d", i)); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("old-%d: %v, want purged", i, err)
		}
	}
	for _, id := range []string{"old-waiting", "new-0"} {
		if run, err := e.GetRun(ctx, id); err != nil {
			t.Errorf("%s: %v, want kept", id, err)
		} else if id == "old-waiting" && run.RuntimeStatus.Finished() {
			t.Errorf("old-waiting: %s, want waiting", run.RuntimeStatus)
		}
	}
	list, err := e.ListRuns(ctx, engine.RunQuery{})
	if err != nil || len(list.Runs) != 2 {
		t.Fatalf("listed %d runs (%v), want 2", len(list.Runs), err)
	}
}
