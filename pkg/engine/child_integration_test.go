//go:build integration

package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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

// TestIntegrationChildRuns_OnAzureStorage: on Azure Table, Queue and Blob storage (Azurite),
// with two engines sharing them, a child run is started once and resumes its parent with its
// final state, also when the child's start loses its reply (the SDK's retry meets the
// start's own insert) and the first notice to the parent is lost (the recheck resumes it);
// cancelling a parent reaches its child, purging it removes both.
func TestIntegrationChildRuns_OnAzureStorage(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, err := clients.EnsureTable(ctx, azuritetest.UniqueName("child"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = table.Delete(context.Background(), nil) })
	q, err := clients.EnsureQueue(ctx, azuritetest.UniqueName("child-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = q.Delete(context.Background(), nil) })
	c, err := clients.EnsureContainer(ctx, azuritetest.UniqueName("child-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })

	reg := durable.NewRegistry()
	for _, g := range childGraphs(t) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	var lostStart, lostNotice atomic.Int32
	store := &enginetest.FaultStore{Store: tablestore.New(table),
		LoseReply: func(ops []engine.Op) bool {
			return insertsHistory(engine.HistoryRunStarted)(ops) && strings.HasPrefix(ops[0].Entity.PartitionKey, engine.ChildRunPrefix) && lostStart.Add(1) == 1
		},
		BeforeSubmit: func(ops []engine.Op) error {
			if notifies(ops) && ops[0].Entity.PartitionKey == "az-p1" && lostNotice.Add(1) == 1 {
				return enginetest.ErrInjected
			}
			return nil
		},
	}
	opts := engine.Options{Registry: reg, Store: store, Queue: queuestore.New(q), Payloads: blobstore.New(c),
		Logger: testLogger(t), PollInterval: 20 * time.Millisecond, RepairAfter: 2 * time.Second, VisibilityTimeout: 30 * time.Second}
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
	e, err := engine.New(opts) // the client's engine: starts, reads, cancels, purges
	if err != nil {
		t.Fatal(err)
	}
	wait := func(id string, done func(engine.Run) bool) engine.Run {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		run, err := e.WaitRun(wctx, id, done)
		if err != nil {
			t.Fatalf("WaitRun(%s): %v (%s %s)", id, err, run.RuntimeStatus, run.CustomStatus)
		}
		return run
	}
	start := func(id, graph string) {
		t.Helper()
		in, _ := json.Marshal(parentState{N: 1, Child: graph, Into: "kid"})
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "parent", InstanceID: id, Input: in}); err != nil {
			t.Fatal(err)
		}
	}

	start("az-p1", "kid")
	run := wait("az-p1", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	if run.RuntimeStatus != engine.StatusCompleted || len(run.ChildInstanceIDs) != 1 || lostStart.Load() == 0 || lostNotice.Load() == 0 {
		t.Fatalf("parent %s %s, children %v; faults fired: start %d, notice %d", run.RuntimeStatus, run.Output, run.ChildInstanceIDs, lostStart.Load(), lostNotice.Load())
	}
	var out struct {
		State parentState `json:"state"`
	}
	kid := run.ChildInstanceIDs[0]
	if err := json.Unmarshal(run.Output, &out); err != nil || out.State.Kid == nil || out.State.Kid.N != 4 || out.State.Seen != kid {
		t.Fatalf("parent output %s", run.Output)
	}
	if child, err := e.GetRun(ctx, kid); err != nil || child.RuntimeStatus != engine.StatusCompleted || child.ParentInstanceID != "az-p1" {
		t.Fatalf("child %+v, %v", child, err)
	}
	page, err := e.ListRuns(ctx, engine.RunQuery{GraphName: "kid"})
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("runs of kid: %d, %v (want exactly one child)", len(page.Runs), err)
	}

	start("az-p2", "kid_wait")
	run = wait("az-p2", func(r engine.Run) bool { p, _ := r.Progress(); return p.WaitingForChild != "" })
	p, _ := run.Progress()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		// The parent waits before its child starts: the child's id is unknown for a moment.
		if _, err := e.GetRun(ctx, p.WaitingForChild); err == nil || time.Now().After(deadline) {
			break
		}
	}
	wait(p.WaitingForChild, engine.RunSettled)
	if err := e.CancelRun(ctx, "az-p2", "stop"); err != nil {
		t.Fatal(err)
	}
	if child := wait(p.WaitingForChild, func(r engine.Run) bool { return r.RuntimeStatus.Finished() }); child.RuntimeStatus != engine.StatusTerminated {
		t.Fatalf("child after the parent's cancel: %s", child.RuntimeStatus)
	}
	for _, id := range []string{"az-p1", "az-p2"} {
		if err := e.PurgeRun(ctx, id); err != nil {
			t.Fatalf("purge %s: %v", id, err)
		}
	}
	for _, id := range []string{kid, p.WaitingForChild} {
		if _, err := e.GetRun(ctx, id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Fatalf("child %s after its parent's purge: %v", id, err)
		}
	}
}
