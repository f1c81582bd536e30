package exampleapp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// One rule for duplicate keys in request bodies on every route family: the last one wins
// (duplicate keys: the last one wins, as Python's json.loads does), never
// a 400 on one family and a silent pick on another.
func TestExampleApp_DuplicateKeys_LastWinsEverywhere(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			// Hosting: invoke.
			status, body := do(t, tr, "POST", "/api/graphs/echo_agent/invoke",
				`{"input": {"messages": [{"role": "user", "content": "first"}]}, "input": {"messages": [{"role": "user", "content": "last"}]}, "config": {"configurable": {"thread_id": "dup-`+tr.Name+`"}}}`)
			if status != 200 || !strings.Contains(body, `"content":"last"`) || strings.Contains(body, "first") {
				t.Errorf("hosting invoke: %d %s", status, body)
			}
			// Runs API: start.
			id := "dup-" + tr.Name
			if status, body := do(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id": "x-`+id+`", "instance_id": "`+id+`", "input": {"source_url": "first"}, "input": {"source_url": "last"}}`); status != 202 {
				t.Fatalf("runs start: %d %s", status, body)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				status, body = do(t, tr, "GET", "/api/runs/"+id, "")
				if strings.Contains(body, `"runtime_status": "Completed"`) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if status != 200 || !strings.Contains(body, `"initial_state": {"source_url": "last"}`) {
				t.Errorf("runs start kept another key: %d %.400s", status, body)
			}
			if status, _ := do(t, tr, "GET", "/api/runs/x-"+id, ""); status != 404 {
				t.Errorf("runs start used the first instance_id: %d", status)
			}
			// Platform: create thread.
			status, body = do(t, tr, "POST", "/api/threads", `{"metadata": {"who": "first"}, "metadata": {"who": "last"}}`)
			var th struct {
				Metadata map[string]string `json:"metadata"`
			}
			if status != 200 || json.Unmarshal([]byte(body), &th) != nil || th.Metadata["who"] != "last" {
				t.Errorf("platform thread create: %d %s", status, body)
			}
		})
	}
}
