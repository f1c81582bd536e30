package exampleapp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestA2A_TaskIsTheCallersRun_BothTransports: the example app serves support_agent as an A2A
// agent under isolation: a text message starts a durable run that is input-required, the
// runs API shows the same run to its owner, another identity cannot read or cancel the task,
// and the owner's answer completes it with the run's output.
func TestA2A_TaskIsTheCallersRun_BothTransports(t *testing.T) {
	for _, tr := range isolatedApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			alice, bob := "alice-a2a-"+tr.Name, "bob-a2a-"+tr.Name
			rpc := func(id, method, params string) (task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Data json.RawMessage `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			}, errCode int) {
				t.Helper()
				code, body := doAs(t, tr, id, tr.FunctionKey, "POST", "/api/a2a/support_agent",
					fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params))
				var a struct {
					Result json.RawMessage `json:"result"`
					Error  *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if code != 200 || json.Unmarshal([]byte(body), &a) != nil {
					t.Fatalf("%s: %d %s", method, code, body)
				}
				if a.Error != nil {
					return task, a.Error.Code
				}
				if method == "SendMessage" {
					var r struct {
						Task json.RawMessage `json:"task"`
					}
					_ = json.Unmarshal(a.Result, &r)
					a.Result = r.Task
				}
				if err := json.Unmarshal(a.Result, &task); err != nil {
					t.Fatalf("%s: %s", method, body)
				}
				return task, 0
			}
			task, _ := rpc(alice, "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"refund please"}]}}`)
			if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("task: %+v", task)
			}
			if code, body := doAs(t, tr, alice, tr.FunctionKey, "GET", "/api/runs/"+task.ID, ""); code != 200 || !strings.Contains(body, `"waiting_for_event": "approval"`) {
				t.Fatalf("the task's run: %d %s", code, body)
			}
			id := fmt.Sprintf(`{"id":%q}`, task.ID)
			if _, code := rpc(bob, "GetTask", id); code != -32001 {
				t.Fatalf("bob reads alice's task: code %d", code)
			}
			if _, code := rpc(bob, "CancelTask", id); code != -32001 {
				t.Fatalf("bob cancels alice's task: code %d", code)
			}
			done, _ := rpc(alice, "SendMessage", fmt.Sprintf(`{"message":{"messageId":"m2","taskId":%q,"role":"ROLE_USER","parts":[{"data":{"approved":true,"reviewer":"ana"}}]}}`, task.ID))
			if done.Status.State != "TASK_STATE_COMPLETED" || len(done.Artifacts) != 1 || !strings.Contains(string(done.Artifacts[0].Parts[0].Data), "Reviewer: ana.") {
				t.Fatalf("answered: %+v", done)
			}
		})
	}
}
