//go:build integration

package exampleapp_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/tickets"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// TestIntegrationStaged_TicketOnTheQueueStartsATriageRun: the staged example app under the
// emulated host with Azurite: a message put on the app's tickets queue (a producer writing
// base64 text, as the Storage SDKs and the portal do) is delivered to tickets_triage by the
// host's queue listener, which starts a content_classifier run named after the message's id;
// the run's steps run in fg_orchestrator's invocations and it completes with the message's
// text triaged. The runs client follows it through the host.
func TestIntegrationStaged_TicketOnTheQueueStartsATriageRun(t *testing.T) {
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		t.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	a := startFunctionsApp(t, bin, 0, nil, nil)
	if !slices.Contains(a.e.Functions(), tickets.DefaultFunction) {
		t.Fatalf("function %s is not loaded: %v", tickets.DefaultFunction, a.e.Functions())
	}
	queue := a.env["FUNCGRAPH_STORAGE_PREFIX"] + "-tickets"
	q, err := azqueue.NewQueueClientFromConnectionString(azuritetest.ConnectionString(t), queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The app created the queue at its start: a producer writes to it at once.
	msg := `{"ticket_id": "T-42", "text": "How do I change the address of my order?"}`
	sent, err := q.EnqueueMessage(t.Context(), base64.StdEncoding.EncodeToString([]byte(msg)), nil)
	if err != nil || len(sent.Messages) != 1 || sent.Messages[0].MessageID == nil {
		t.Fatalf("enqueue: %+v, %v", sent, err)
	}
	id := tickets.InstanceID(*sent.Messages[0].MessageID)

	c, err := runsclient.New(a.e.URL(), runsclient.WithFunctionKey(functionsKey))
	if err != nil {
		t.Fatal(err)
	}
	// The run exists once the listener delivered the message (until then its status is a 404).
	a.waitUntil(id, time.Minute, func(s engine.RunStatus) bool { return s != "" })
	st, err := c.WaitForCompletion(t.Context(), id)
	if err != nil {
		t.Fatalf("follow %s: %v\nemulator log:\n%s", id, err, a.logs)
	}
	final, err := runsclient.FinalState[examples.ContentState](st)
	if err != nil || final.Category == nil || *final.Category != "question" || final.Text == "" {
		t.Fatalf("run %s: %+v %v\nemulator log:\n%s", id, final, err, a.logs)
	}
	var meta map[string]string
	if err := json.Unmarshal(st.Input.Metadata, &meta); err != nil || meta["message_id"] != *sent.Messages[0].MessageID || meta["queue"] != queue {
		t.Fatalf("metadata %s (%v)", st.Input.Metadata, err)
	}
	a.gapFree(id)
}
