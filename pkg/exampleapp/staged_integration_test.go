//go:build integration

package exampleapp_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestIntegrationStaged_LocalFolderRunsUnderTheHost is `make local && cd local && func start`
// with Azurite: the example binary stages its local folder, and the emulator runs that folder
// as the host does (app root = the folder, its host.json and local.settings.json, the
// executable it names), with AzureWebJobsStorage pointed at the test's Azurite through the
// environment. An HTTP call needs the function key; a support_agent run started over HTTP
// runs its steps in fg_orchestrator's queue-triggered invocations, waits for its approval
// event, gets it and completes; the fg_repair timer runs.
func TestIntegrationStaged_LocalFolderRunsUnderTheHost(t *testing.T) {
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		t.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	a := startFunctionsApp(t, bin, 0, nil, nil)
	for _, fn := range []string{"fg_orchestrator", "fg_repair", "fg_health_details", "start_graph_run", "send_run_event"} {
		if !slices.Contains(a.e.Functions(), fn) {
			t.Fatalf("function %s is not loaded: %v", fn, a.e.Functions())
		}
	}

	req, _ := http.NewRequest("GET", a.e.URL()+"/api/health/details", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("health/details without a key = %d, want 401", resp.StatusCode)
	}
	if status, b := a.do("GET", "/api/health/details", ""); status != http.StatusOK || !strings.Contains(string(b), "support_agent") {
		t.Fatalf("health/details with the key = %d %s", status, b)
	}

	run := &fleetRun{id: "staged-1", graph: "support_agent", input: `{"user_message":"I want a refund for order 7"}`,
		event: `{"approved":true,"reviewer":"staged@example.com"}`}
	oracle(t, []*fleetRun{run})
	if status, b := a.do("POST", "/api/graphs/support_agent/runs", `{"instance_id":"staged-1","input":`+run.input+`}`); status != http.StatusAccepted {
		t.Fatalf("start: %d %s", status, b)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, b := a.do("GET", "/api/runs/staged-1", "")
		var st struct {
			Status string `json:"runtime_status"`
			Custom struct {
				Waiting string `json:"waiting_for_event"`
			} `json:"custom_status"`
		}
		_ = json.Unmarshal(b, &st)
		if st.Status == string(engine.StatusRunning) && st.Custom.Waiting == "approval" {
			break
		}
		if engine.RunStatus(st.Status).Finished() || time.Now().After(deadline) {
			t.Fatalf("the run did not come to wait for approval: %s\nemulator log:\n%s", b, a.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, b := a.do("POST", "/api/runs/staged-1/events/approval", run.event); status != http.StatusAccepted {
		t.Fatalf("event: %d %s", status, b)
	}
	status, out := a.wait("staged-1", time.Minute)
	var got any
	_ = json.Unmarshal(out, &got)
	if status != string(engine.StatusCompleted) || !reflect.DeepEqual(got, run.wantOutput) {
		t.Errorf("run: %s %s, want Completed %v", status, out, run.wantOutput)
	}
	a.gapFree("staged-1")
	if logs := a.logs.String(); !strings.Contains(logs, "embedded_dispatcher=false") || strings.Contains(logs, "durable engine started") {
		t.Errorf("the handler ran its own dispatcher under the host: the queue trigger proved nothing\n%s", logs)
	}

	if err := a.e.TriggerTimer(t.Context(), "fg_repair"); err != nil {
		t.Errorf("fg_repair: %v", err)
	}
}
