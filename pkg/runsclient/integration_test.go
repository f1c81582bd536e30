//go:build integration

package runsclient_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// serveAzurite serves the example graphs' runs API on an engine over a table, queue and
// container of the test's own on Azurite, its embedded dispatcher running.
func serveAzurite(t *testing.T) *server {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, name := azuritetest.UniqueName("client"), azuritetest.UniqueName("client-")
	store, err := tablestore.Open(ctx, clients, table)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := queuestore.Open(ctx, clients, name)
	if err != nil {
		t.Fatal(err)
	}
	payloads, err := blobstore.Open(ctx, clients, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = clients.Tables.DeleteTable(ctx, table, nil)
		_, _ = clients.Queues.DeleteQueue(ctx, name, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, name, nil)
	})
	reg := runsapitest.Registry(t, examples.All)
	eng, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads,
		PollInterval: 50 * time.Millisecond, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return serveEngine(t, eng, reg, true)
}

// TestIntegrationClient_SupportAgentOnAzurite: through the client, on Azure Table storage, a
// support_agent run is started with a typed input, followed to its wait with its state, sent
// its approval, resumed from the cursor to its end, listed and read back page by page.
func TestIntegrationClient_SupportAgentOnAzurite(t *testing.T) {
	c := serveAzurite(t).client(t)
	ctx := t.Context()
	if _, err := runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "I want a refund for invoice 42"}, &runsclient.StartOptions{InstanceID: "az-1"}); err != nil {
		t.Fatal(err)
	}
	var cursor string
	for ev, err := range runsclient.Follow[examples.SupportState](ctx, c, "az-1", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.State == nil {
			t.Fatalf("event %+v without the state", ev.FeedEvent)
		}
		if ev.Type == "wait_started" {
			if !ev.State.NeedsHuman {
				t.Fatalf("state at the wait: %+v", ev.State)
			}
			cursor = ev.Cursor
			break
		}
	}
	if err := c.SendEvent(ctx, "az-1", "approval", approval{Approved: true, Reviewer: "ops@example.com"}, nil); err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev, err := range c.Feed(ctx, "az-1", runsclient.FeedOptions{Cursor: cursor}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if slices.Contains(types, "run_started") || slices.Contains(types, "wait_started") || types[len(types)-1] != "end" || !slices.Contains(types, "run_completed") {
		t.Fatalf("resumed feed %v", types)
	}
	st, err := c.WaitForCompletion(ctx, "az-1")
	if err != nil {
		t.Fatal(err)
	}
	final, err := runsclient.FinalState[examples.SupportState](st)
	if err != nil || final.Reviewer == nil || *final.Reviewer != "ops@example.com" {
		t.Fatalf("final %+v, %v", final, err)
	}
	var listed []string
	for r, err := range c.ListAll(ctx, runsclient.ListOptions{GraphName: "support_agent", Status: runsclient.StatusCompleted, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, r.InstanceID)
	}
	if !slices.Equal(listed, []string{"az-1"}) {
		t.Fatalf("listed %v", listed)
	}
	n := 0
	for _, err := range c.HistoryAll(ctx, "az-1", runsclient.HistoryOptions{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < len(types) {
		t.Fatalf("history has %d rows, the resumed feed alone %d", n, len(types))
	}
	if err := c.Purge(ctx, "az-1"); err != nil {
		t.Fatal(err)
	}
}
