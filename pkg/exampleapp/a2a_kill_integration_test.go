//go:build integration

package exampleapp_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIntegrationA2A_InputRequiredTaskSurvivesAWorkerKill: on Azurite, with two workers, an
// A2A message to support_agent leaves its task input-required on worker 0, which is then
// killed with SIGKILL; worker 1 reads the same task, takes the answer, and the task completes
// with the run's output: a task is a durable run, not a worker's memory.
func TestIntegrationA2A_InputRequiredTaskSurvivesAWorkerKill(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2)
	rng := rand.New(rand.NewPCG(4, 4))
	type task struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Artifacts []struct {
			Parts []struct {
				Data json.RawMessage `json:"data"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	rpc := func(method, params string) task {
		t.Helper()
		code, body := f.do(rng, "POST", "/api/a2a/support_agent", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, nil)
		var a struct {
			Result struct {
				task
				Task *task `json:"task"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if code != 200 || json.Unmarshal(body, &a) != nil || a.Error != nil {
			t.Fatalf("%s: %d %s", method, code, body)
		}
		if a.Result.Task != nil {
			return *a.Result.Task
		}
		return a.Result.task
	}
	f.kill(1) // worker 0 alone takes the message
	sent := rpc("SendMessage", `{"message":{"messageId":"k1","role":"ROLE_USER","parts":[{"text":"refund order 7"}]}}`)
	if sent.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("sent: %+v", sent)
	}
	f.kill(0)
	f.start(1)
	if got := rpc("GetTask", `{"id":"`+sent.ID+`"}`); got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("after the kill: %+v", got)
	}
	done := rpc("SendMessage", `{"message":{"messageId":"k2","taskId":"`+sent.ID+`","role":"ROLE_USER","parts":[{"data":{"approved":true,"reviewer":"kim"}}]}}`)
	if done.Status.State != "TASK_STATE_COMPLETED" || len(done.Artifacts) != 1 ||
		!strings.Contains(string(done.Artifacts[0].Parts[0].Data), "Reviewer: kim.") {
		t.Fatalf("answered on worker 1: %+v", done)
	}
}
