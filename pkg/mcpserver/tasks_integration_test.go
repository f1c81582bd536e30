//go:build integration

package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// TestIntegrationTasks_SurviveAWorkerKill: on Azure storage, a task that went input_required
// on one instance (its engine and its MCP endpoint) is answered on another after the first
// is gone: tasks/get there reads it input_required, tasks/update carries the answer into the
// run, and the task completes with the run's output, through both transports.
func TestIntegrationTasks_SurviveAWorkerKill(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, queueName := azuritetest.UniqueName("mcp"), azuritetest.UniqueName("mcp-")
	store, err := tablestore.Open(ctx, clients, table)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := queuestore.Open(ctx, clients, queueName)
	if err != nil {
		t.Fatal(err)
	}
	payloads, err := blobstore.Open(ctx, clients, queueName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = clients.Tables.DeleteTable(ctx, table, nil)
		_, _ = clients.Queues.DeleteQueue(ctx, queueName, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, queueName, nil)
	})
	instance := func() (*engine.Engine, []funchosttest.Transport) {
		reg := durable.NewRegistry()
		if err := reg.Register(examples.MustSupportAgent()); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads,
			PollInterval: 50 * time.Millisecond, Logger: funchosttest.TestLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = eng.Close() })
		return eng, funchosttest.Transports(t, mcpApp(t, mcpserver.Options{Runs: eng, Registry: reg}))
	}
	first, firstTrs := instance()
	var ids []string
	for _, tr := range firstTrs {
		created := callTask(t, tr, "support_agent", refund)
		if created.Status != mcpserver.TaskInputRequired {
			t.Fatalf("%s: tools/call answer = %+v", tr.Name, created)
		}
		ids = append(ids, created.TaskID)
	}
	if err := first.Close(); err != nil { // the first instance's worker is gone
		t.Fatal(err)
	}
	_, trs := instance()
	for i, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := ids[i]
			if got := getTask(t, tr, id); got.Status != mcpserver.TaskInputRequired {
				t.Fatalf("tasks/get on the second instance = %+v", got)
			}
			_, res, e := rpc(t, tr, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
				"approval": map[string]any{"action": "accept", "content": map[string]any{"approved": true, "reviewer": "ann"}},
			}})
			if e != nil || string(res) != "{}" {
				t.Fatalf("tasks/update = %s, %+v", res, e)
			}
			done := awaitTask(t, tr, id, mcpserver.TaskCompleted)
			var out struct {
				StructuredContent struct {
					State struct {
						Approved bool   `json:"approved"`
						Reviewer string `json:"reviewer"`
					} `json:"state"`
				} `json:"structuredContent"`
			}
			if err := json.Unmarshal(done.Result, &out); err != nil || !out.StructuredContent.State.Approved || out.StructuredContent.State.Reviewer != "ann" {
				t.Fatalf("task result = %s (%v)", done.Result, err)
			}
		})
	}
}
