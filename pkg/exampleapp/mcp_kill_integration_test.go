//go:build integration

package exampleapp_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestIntegrationMCP_InputRequiredTaskSurvivesAWorkerKill: on Azurite, with two server
// processes of the example app, a tools/call whose client declares the Tasks extension is
// answered by worker 0 with an input_required task; worker 0 is killed (SIGKILL) before the
// answer, and on worker 1 tasks/get reads the task input_required, tasks/update carries the
// approval into the run, and the task completes with the run's output.
func TestIntegrationMCP_InputRequiredTaskSurvivesAWorkerKill(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2)
	rng := rand.New(rand.NewPCG(44, 44))
	header := map[string]string{"Accept": "application/json, text/event-stream"}
	type task struct {
		TaskID string          `json:"taskId"`
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	rpc := func(method, params string) task {
		t.Helper()
		code, body := f.do(rng, "POST", "/api/mcp", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, header)
		var a struct {
			Result task            `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if code != 200 || json.Unmarshal(body, &a) != nil || a.Error != nil {
			t.Fatalf("%s: %d %s", method, code, body)
		}
		return a.Result
	}
	f.kill(1) // worker 0 alone takes the call
	caps := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	created := rpc("tools/call", `{"name":"support_agent","arguments":{"user_message":"I want a refund for order 9"},`+caps+`}`)
	if created.Status != "input_required" || created.TaskID == "" {
		t.Fatalf("tools/call: %+v", created)
	}
	f.kill(0)
	f.start(1)
	if got := rpc("tasks/get", `{"taskId":"`+created.TaskID+`"}`); got.Status != "input_required" {
		t.Fatalf("after the kill: %+v", got)
	}
	rpc("tasks/update", `{"taskId":"`+created.TaskID+`","inputResponses":{"approval":{"action":"accept","content":{"approved":true,"reviewer":"kim"}}}}`)
	deadline := time.Now().Add(time.Minute)
	for {
		got := rpc("tasks/get", `{"taskId":"`+created.TaskID+`"}`)
		if got.Status == "completed" {
			if !strings.Contains(string(got.Result), "Reviewer: kim.") {
				t.Fatalf("completed on worker 1: %s", got.Result)
			}
			return
		}
		if got.Status != "working" && got.Status != "input_required" || time.Now().After(deadline) {
			t.Fatalf("task on worker 1: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
