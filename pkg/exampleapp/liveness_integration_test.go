//go:build integration

package exampleapp_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// TestIntegrationFunctions_OutageLongerThanDeliveryBudget_RunsComplete (issue #18, liveness):
// under the emulated Functions host, every storage request of the handler fails — a fault
// proxy in front of Azurite refuses its connections — while runs are in the middle of a step,
// for longer than the delivery budget (maxDequeueCount 3 × visibilityTimeout 1 s, and the
// handler's own retries): the host retries each work item with its back-off, then moves it to
// <queue>-poison, while its queue listener keeps reaching the queue. Once storage is back, the
// fg_repair pass puts every item back and every run completes, gap-free, within a few repair
// periods: none stranded in the poison queue, none failed as poison.
func TestIntegrationFunctions_OutageLongerThanDeliveryBudget_RunsComplete(t *testing.T) {
	t.Parallel() // slow, and independent of the package's other tests (its own app, storage prefix and ports)
	bin := buildSlowApp(t)
	direct := azuritetest.ConnectionString(t)
	proxies, err := faultproxy.StartSet(direct, &faultproxy.Options{Seed: 18})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxies.Close() })
	const maxDequeue, repairPeriod = 3, 2 * time.Second
	dir := t.TempDir()
	a := startFunctionsAppWith(t, bin, functionsOptions{
		env:    map[string]string{"SLOWAPP_DIR": dir, "AzureWebJobsStorage": proxies.ConnectionString()},
		queues: testQueues(maxDequeue), listenerStorage: direct,
	})
	a.repairEvery(repairPeriod)

	var ids []string
	for i := range 4 {
		id := fmt.Sprintf("outage-%d", i)
		// The node hangs until the test releases it (a file in SLOWAPP_DIR): all four are in
		// it when the outage begins, however long a loaded machine takes to start them.
		body := fmt.Sprintf(`{"input":{"hang_ms":600000,"marker":%q},"instance_id":%q}`, id, id)
		if status, b := a.do("POST", "/api/graphs/slow/runs", body); status != http.StatusAccepted {
			t.Fatalf("start %s: %d %s", id, status, b)
		}
		ids = append(ids, id)
	}
	for _, id := range ids { // each is inside its hanging node: Running
		a.waitUntil(id, time.Minute, func(s engine.RunStatus) bool { return s == engine.StatusRunning })
	}
	proxies.Outage(faultproxy.OutageRefuse, 10*time.Minute)
	// The nodes end inside the outage, so their commits meet it.
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	deadline := began.Add(3 * time.Minute)
	for strings.Count(a.logs.String(), "Moving message to queue") < len(ids) {
		if time.Now().After(deadline) {
			t.Fatalf("the work items did not reach the poison queue within 3 minutes:\n%s", a.logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * repairPeriod) // repair passes fail too while storage is down
	proxies.EndOutage()
	ended := time.Now()
	t.Logf("outage of %v; every work item was poisoned during it", ended.Sub(began).Round(time.Second))

	for _, id := range ids {
		status, out := a.wait(id, 2*time.Minute)
		if status != string(engine.StatusCompleted) || !strings.Contains(string(out), `"done": true`) {
			t.Errorf("run %s: %s %s, want Completed with done", id, status, out)
		}
		a.gapFree(id)
	}
	// How soon is for the benchmarks, not a test on a loaded machine: for these settings it is
	// max(visibilityTimeout + M, RepairAfter) + P + M, where only the poison path applies (P + M:
	// one repair pass, one poll), plus a repair pass that was still retrying its storage calls
	// when the outage ended, and the runs' own steps. What the test holds is that they complete
	// at all (a.wait), through the repair pass putting each poisoned item back (below).
	t.Logf("the runs completed %v after the outage ended", time.Since(ended).Round(time.Millisecond))
	logs := a.logs.String()
	if n := strings.Count(logs, "repair put a poisoned work item back on the queue"); n < len(ids) {
		t.Errorf("the repair pass put back %d poisoned items, want %d", n, len(ids))
	}
	if strings.Contains(logs, "without completing") {
		t.Error("a run was failed as poison by storage errors")
	}
	poison, err := azqueue.NewQueueClientFromConnectionString(direct, a.env["FUNCGRAPH_STORAGE_PREFIX"]+"-work-poison", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := poison.GetProperties(t.Context(), nil); err != nil || p.ApproximateMessagesCount == nil || *p.ApproximateMessagesCount != 0 {
		t.Errorf("poison queue after recovery: %v messages (err %v), want 0", p.ApproximateMessagesCount, err)
	}
}
