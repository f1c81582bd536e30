//go:build integration

package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// TestIntegrationChildRuns_DeepFamilyCancelledInTheBackground_OnAzureStorage: on Azure Table,
// Queue and Blob storage (Azurite), with two engines working the queue, a cancel of a family
// MaxChildDepth deep answers once its root is cancelled and the workers cancel the rest; when
// the cancel's process is gone before its step reached the queue, the repair pass finishes
// the family from the intent in the table.
func TestIntegrationChildRuns_DeepFamilyCancelledInTheBackground_OnAzureStorage(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, err := clients.EnsureTable(ctx, azuritetest.UniqueName("famcancel"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = table.Delete(context.Background(), nil) })
	q, err := clients.EnsureQueue(ctx, azuritetest.UniqueName("famcancel-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = q.Delete(context.Background(), nil) })
	c, err := clients.EnsureContainer(ctx, azuritetest.UniqueName("famcancel-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })

	reg := durable.NewRegistry()
	if err := reg.Register(famGraph(t, "fam", false)); err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{Registry: reg, Store: tablestore.New(table), Queue: queuestore.New(q), Payloads: blobstore.New(c),
		Logger: testLogger(t), PollInterval: 20 * time.Millisecond, RepairAfter: 2 * time.Second, SweepInterval: 500 * time.Millisecond,
		VisibilityTimeout: 30 * time.Second}
	for range 2 {
		e, err := engine.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
	}
	// The client's engine: it starts and cancels; its queue drops a cancel's step while
	// dropSteps is set, as a process gone right after its answer.
	var dropSteps atomic.Bool
	clientOpts := opts
	counts := &enginetest.OpCounts{}
	clientOpts.Store = enginetest.CountingStore{Store: opts.Store, Counts: counts}
	clientOpts.Queue = &enginetest.FaultQueue{WorkQueue: opts.Queue, OnEnqueue: func(body []byte) (int, error) {
		if dropSteps.Load() && isCancelItem(body) {
			return 0, nil
		}
		return 1, nil
	}}
	e, err := engine.New(clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(id string, done func(engine.Run) bool) engine.Run {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			// A parent lists its child once it waits for it, a moment before the child starts.
			if _, err := e.GetRun(ctx, id); !errors.Is(err, engine.ErrRunNotFound) || time.Now().After(deadline) {
				break
			}
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		run, err := e.WaitRun(wctx, id, done)
		if err != nil {
			t.Fatalf("WaitRun(%s): %v (%s %s)", id, err, run.RuntimeStatus, run.CustomStatus)
		}
		return run
	}
	// chain starts root and returns its family once the deepest run waits for its event.
	chain := func(root string) []string {
		t.Helper()
		in, _ := json.Marshal(famState{Kids: 1, Levels: engine.DefaultMaxChildDepth, Hold: true})
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "fam", InstanceID: root, Input: in}); err != nil {
			t.Fatal(err)
		}
		runs := []string{root}
		for len(runs) <= engine.DefaultMaxChildDepth {
			run := wait(runs[len(runs)-1], func(r engine.Run) bool { return len(r.ChildInstanceIDs) == 1 })
			runs = append(runs, run.ChildInstanceIDs[0])
		}
		wait(runs[len(runs)-1], func(r engine.Run) bool { _, ok := r.WaitingFor(); return ok })
		return runs
	}
	terminated := func(runs []string, reason string) {
		t.Helper()
		for i, id := range runs {
			run := wait(id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
			want := reason
			if i > 0 {
				want = "parent run '" + runs[i-1] + "' was cancelled: " + reason
			}
			if got := outputString(t, run); run.RuntimeStatus != engine.StatusTerminated || got != want {
				t.Fatalf("run %s is %s with reason %q, want terminated with %q", id, run.RuntimeStatus, got, want)
			}
		}
	}

	runs := chain("az-deep")
	before, began := counts.Table(), time.Now()
	if err := e.CancelRun(ctx, runs[0], "stop"); err != nil {
		t.Fatal(err)
	}
	calls, answered := counts.Table()-before, time.Since(began)
	terminated(runs, "stop")
	t.Logf("a family of %d runs: the cancel answered after %d table calls in %v, the family was terminated %v after the cancel began",
		len(runs), calls, answered, time.Since(began))
	if calls > 12 {
		t.Fatalf("the cancel made %d table calls: more than its own run's", calls)
	}

	runs = chain("az-deep-lost")
	dropSteps.Store(true)
	if err := e.CancelRun(ctx, runs[0], "stop"); err != nil {
		t.Fatal(err)
	}
	terminated(runs, "stop") // the repair pass takes the lost step, the workers the rest
}
