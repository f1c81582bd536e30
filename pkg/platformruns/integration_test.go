//go:build integration

package platformruns_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// TestIntegrationBackend_QueuedRunsOnAzureTables: on Azure Table storage, runs queued on one
// thread from two instances drain in order, woken one by the other at a storage cost per
// run that does not grow with the queue, and List and Active read the thread's rows only.
func TestIntegrationBackend_QueuedRunsOnAzureTables(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err := clients.EnsureTable(t.Context(), azuritetest.UniqueName("pruns"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = table.Delete(context.Background(), nil) })
	store, queue := tablestore.New(table), memory.NewQueue()
	exec := &blocker{release: make(chan struct{})}
	a, b := countedOn(t, store, queue, exec), countedOn(t, store, queue, exec)
	for i := range 10 {
		join(t, a.rb, submit(t, a.rb, fmt.Sprintf("other-%d", i%2), i))
	}
	const n = 40
	a.reset()
	b.reset()
	var runs []platform.Run
	for i := range n {
		rb := a.rb
		if i%2 == 1 {
			rb = b.rb
		}
		runs = append(runs, submit(t, rb, "busy", i))
	}
	waitingForTurn(t, a, runs[n-1].RunID)
	close(exec.release)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for _, r := range runs {
		if got, err := b.rb.Join(ctx, r.ThreadID, r.RunID); err != nil || got.Status != platform.RunSuccess {
			t.Fatalf("%s = %+v, %v", r.RunID, got, err)
		}
	}
	for _, r := range runs {
		if _, err := a.eng.WaitRun(ctx, r.RunID, nil); err != nil {
			t.Fatal(err)
		}
	}
	exec.mu.Lock()
	for i, id := range exec.order[len(exec.order)-n:] {
		if id != runs[i].RunID {
			t.Fatalf("run %d executed was %s, want %s", i, id, runs[i].RunID)
		}
	}
	exec.mu.Unlock()
	total := a.counts.Table() + b.counts.Table()
	t.Logf("%d runs on Azure tables: %d table operations", n, total)
	if total > 100*n {
		t.Errorf("%d table operations for %d runs, want ≤ %d", total, n, 100*n)
	}
	a.reset()
	list, err := a.rb.List(t.Context(), "busy", "", 2, 1)
	if err != nil || len(list) != 2 || list[0].RunID != runs[n-2].RunID || list[1].RunID != runs[n-3].RunID {
		t.Fatalf("List(busy, 2, 1) = %+v, %v", list, err)
	}
	if active, err := a.rb.Active(t.Context(), "busy"); err != nil || active {
		t.Fatalf("Active(busy) = %v, %v; want false", active, err)
	}
	if q, g := a.counts.Queries.Load(), a.counts.Gets.Load(); q != 2 || g > 3 {
		t.Errorf("List and Active: %d queries and %d reads, want 2 and ≤ 3", q, g)
	}
}
