//go:build integration

package launch_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// TestIntegrationStage_UserModule_LocalFolderServes runs the user's staged local folder under
// the emulated host with Azurite given through the environment (as `AzureWebJobsStorage=…
// func start` would): its hosted graph answers with a function key, and a run of its durable
// graph completes through the fg_orchestrator queue trigger.
func TestIntegrationStage_UserModule_LocalFolderServes(t *testing.T) {
	local, _ := stageUserModule(t)
	// A storage prefix set in the environment wins over the staged one; the staged
	// FUNCGRAPH_WORK_QUEUE then names another queue, and the app refuses to start.
	var logs strings.Builder
	var mu sync.Mutex
	e, err := funchosttest.Start(t.Context(), funchosttest.Options{
		AppRoot: local,
		Env:     map[string]string{"AzureWebJobsStorage": azuritetest.ConnectionString(t), "FUNCGRAPH_STORAGE_PREFIX": azuritetest.UniqueName("u")},
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&logs, format+"\n", args...)
		},
	})
	if err == nil {
		_ = e.Close()
		t.Fatal("the app started with a storage prefix that its FUNCGRAPH_WORK_QUEUE does not name")
	}
	mu.Lock()
	refused := strings.Contains(logs.String(), `FUNCGRAPH_WORK_QUEUE=\"funcgraph-work\"`) && strings.Contains(logs.String(), "FUNCGRAPH_STORAGE_PREFIX=")
	mu.Unlock()
	if !refused {
		t.Fatalf("start failed without the mismatch message: %v\n%s", err, logs.String())
	}

	e, err = funchosttest.Start(t.Context(), funchosttest.Options{
		AppRoot: local,
		Env:     map[string]string{"AzureWebJobsStorage": azuritetest.ConnectionString(t)},
		Keys:    funchost.Keys{HostFunction: map[string]string{"default": "user-key"}},
		Logf:    t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	send := func(method, path, body string) (int, string) { return call(t, method, e.URL()+path, "user-key", body) }
	if status, body := send("POST", "/api/graphs/shout/invoke", `{"input":{"text":"hi"}}`); status != http.StatusOK || !strings.Contains(body, `"hi!"`) {
		t.Fatalf("invoke = %d %s", status, body)
	}
	id := "order-" + azuritetest.UniqueName("o")
	if status, body := send("POST", "/api/graphs/orders/runs", `{"instance_id":"`+id+`","input":{}}`); status != http.StatusAccepted {
		t.Fatalf("start = %d %s", status, body)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, body := send("GET", "/api/runs/"+id, "")
		var st struct {
			Status string          `json:"runtime_status"`
			Output json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		if st.Status == "Completed" && strings.Contains(string(st.Output), `"shipped": true`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run did not complete: %s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
