package exampleapp_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDurableAssistant_InterruptResume drives support_agent as a platform assistant through
// both transports: listed and found as an assistant; runs.wait stops at its wait for the
// approval event as an interrupt (thread interrupted, the event in getState's tasks); a run
// with command.resume delivers the approval and completes; a resume with nothing pending is
// 400; runs.stream shows the interrupt as __interrupt__; deleting the thread removes its
// engine run.
func TestDurableAssistant_InterruptResume(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			do := func(method, path, body string) (int, string) {
				t.Helper()
				return do(t, tr, method, path, body)
			}
			decode := func(body string) map[string]any {
				t.Helper()
				var m map[string]any
				if err := json.Unmarshal([]byte(body), &m); err != nil {
					t.Fatalf("decode %s: %v", body, err)
				}
				return m
			}
			if code, body := do("POST", "/api/assistants/search", `{"graph_id":"support_agent"}`); code != 200 ||
				!strings.Contains(body, `"assistant_id": "support_agent"`) {
				t.Fatalf("search: %d %s", code, body)
			}
			if code, body := do("POST", "/api/runs/wait", `{"assistant_id":"content_classifier","input":{"text":"hello"}}`); code != 200 || strings.Contains(body, "__interrupt__") {
				t.Fatalf("threadless durable run: %d %s", code, body)
			}
			if code, body := do("GET", "/api/assistants/support_agent", ""); code != 200 || decode(body)["graph_id"] != "support_agent" {
				t.Fatalf("get: %d %s", code, body)
			}
			tid := "durable-" + tr.Name
			if code, body := do("POST", "/api/threads", `{"thread_id":"`+tid+`"}`); code != 200 {
				t.Fatalf("create thread: %d %s", code, body)
			}
			threadStatus := func() string {
				t.Helper()
				code, body := do("GET", "/api/threads/"+tid, "")
				if code != 200 {
					t.Fatalf("get thread: %d %s", code, body)
				}
				return decode(body)["status"].(string)
			}
			if s := threadStatus(); s != "idle" {
				t.Fatalf("new thread status %q", s)
			}

			code, body := do("POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","input":{"user_message":"I need a refund"}}`)
			if code != 200 {
				t.Fatalf("wait: %d %s", code, body)
			}
			out := decode(body)
			ints, _ := out["__interrupt__"].([]any)
			if len(ints) != 1 || out["needs_human"] != true {
				t.Fatalf("wait body without the interrupt: %s", body)
			}
			if v := ints[0].(map[string]any)["value"].(map[string]any); v["event"] != "approval" || v["resume_node"] != "draft_reply" {
				t.Fatalf("interrupt value: %v", v)
			}
			if s := threadStatus(); s != "interrupted" {
				t.Fatalf("status after interrupt %q", s)
			}
			if code, body := do("GET", "/api/threads/"+tid, ""); code != 200 || !strings.Contains(body, `"interrupts": {"thread-`+tid+`:`) {
				t.Fatalf("thread interrupts: %d %s", code, body)
			}
			if code, body := do("POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","command":{"goto":"draft_reply"}}`); code != 501 ||
				body != `{"detail": "Command 'goto' is not supported; only 'resume' is available."}` {
				t.Fatalf("goto: %d %s", code, body)
			}
			code, body = do("GET", "/api/threads/"+tid+"/state", "")
			st := decode(body)
			tasks, _ := st["tasks"].([]any)
			if code != 200 || len(tasks) != 1 || len(st["next"].([]any)) != 1 || st["next"].([]any)[0] != "draft_reply" {
				t.Fatalf("state: %d %s", code, body)
			}
			if ti := tasks[0].(map[string]any)["interrupts"].([]any); len(ti) != 1 ||
				ti[0].(map[string]any)["value"].(map[string]any)["event"] != "approval" {
				t.Fatalf("task interrupts: %s", body)
			}
			if code, body := do("POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","input":{"user_message":"again"}}`); code != 409 {
				t.Fatalf("new input on an interrupted thread: %d %s", code, body)
			}

			code, body = do("POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","command":{"resume":{"approved":true,"reviewer":"x"}}}`)
			out = decode(body)
			if code != 200 || out["approved"] != true || out["reviewer"] != "x" || out["__interrupt__"] != nil ||
				out["final_response"] != "We have queued your refund review. A team member will validate the invoice and confirm next steps. Reviewer: x." {
				t.Fatalf("resume: %d %s", code, body)
			}
			if s := threadStatus(); s != "idle" {
				t.Fatalf("status after resume %q", s)
			}
			code, body = do("GET", "/api/threads/"+tid+"/state", "")
			if st := decode(body); code != 200 || len(st["tasks"].([]any)) != 0 || st["values"].(map[string]any)["reviewer"] != "x" {
				t.Fatalf("final state: %d %s", code, body)
			}
			code, body = do("POST", "/api/threads/"+tid+"/history", `{"limit":10}`)
			var hist []map[string]any
			if err := json.Unmarshal([]byte(body), &hist); code != 200 || err != nil || len(hist) < 3 {
				t.Fatalf("history: %d %s", code, body)
			}
			if code, body := do("POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","command":{"resume":{"approved":true}}}`); code != 400 ||
				body != `{"detail": "Cannot resume thread '`+tid+`': it has no pending interrupt"}` {
				t.Fatalf("resume with nothing pending: %d %s", code, body)
			}

			// A background run stops at the interrupt as status interrupted; a resume in the
			// background completes the thread.
			code, body = do("POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"support_agent","input":{"user_message":"refund"}}`)
			bg := decode(body)
			if code != 200 {
				t.Fatalf("runs.create: %d %s", code, body)
			}
			if code, body := do("GET", "/api/threads/"+tid+"/runs/"+bg["run_id"].(string)+"/join", ""); code != 200 || !strings.Contains(body, `{"user_message": "refund", "needs_human": true,`) {
				t.Fatalf("join: %d %s", code, body)
			}
			if code, body := do("GET", "/api/threads/"+tid+"/runs/"+bg["run_id"].(string), ""); code != 200 || decode(body)["status"] != "interrupted" {
				t.Fatalf("background run: %d %s", code, body)
			}
			_, body = do("POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"support_agent","command":{"resume":{"approved":true,"reviewer":"bg"}}}`)
			bg = decode(body)
			if code, body := do("GET", "/api/threads/"+tid+"/runs/"+bg["run_id"].(string)+"/join", ""); code != 200 || decode(body)["reviewer"] != "bg" {
				t.Fatalf("background resume: %d %s", code, body)
			}
			if s := threadStatus(); s != "idle" {
				t.Fatalf("status after background resume %q", s)
			}

			code, body = do("POST", "/api/threads/"+tid+"/runs/stream",
				`{"assistant_id":"support_agent","input":{"user_message":"legal question"},"stream_mode":["values","updates"]}`)
			if code != 200 || !strings.Contains(body, "event: updates\ndata: {\"__interrupt__\": [") ||
				!strings.Contains(body, "event: values\ndata: {\"user_message\": \"legal question\"") {
				t.Fatalf("stream: %d %s", code, body)
			}
			if s := threadStatus(); s != "interrupted" {
				t.Fatalf("status after streamed interrupt %q", s)
			}

			// Deleting the thread ends and purges its waiting durable run.
			if code, body := do("GET", "/api/runs/thread-"+tid, ""); code != 200 {
				t.Fatalf("engine run before delete: %d %s", code, body)
			}
			if code, body := do("DELETE", "/api/threads/"+tid, ""); code != 204 {
				t.Fatalf("delete thread: %d %s", code, body)
			}
			if code, body := do("GET", "/api/runs/thread-"+tid, ""); code != 404 {
				t.Fatalf("engine run after delete: %d %s, want 404", code, body)
			}
		})
	}
}
