package exampleapp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestIsolation_ThreadRunMapping_BothTransports replays the mapping attacks on a durable
// assistant's thread, through both transports:
//   - alice's thread id cannot follow "thread-" as it is (too long), so its run id is hashed;
//     bob's thread named by those hex digits does not reach her run: not its state, not its
//     interrupt, not a resume, not a delete;
//   - bob cannot take the run id of a thread before its first durable run (the runs API
//     refuses the threads' ids), so alice's first run on her thread is hers.
func TestIsolation_ThreadRunMapping_BothTransports(t *testing.T) {
	threadRunMappingCases(t, isolatedApp(t))
}

// threadRunMappingCases runs the mapping attacks against an app served with isolation, the
// identity taken from X-MS-CLIENT-PRINCIPAL-ID.
func threadRunMappingCases(t *testing.T, trs []funchosttest.Transport) {
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			tid := strings.Repeat("a", 240) + "-" + tr.Name // 250–256 characters: "thread-<tid>" is too long
			if code, body := doAs(t, tr, "alice", key, "POST", "/api/threads", `{"thread_id":"`+tid+`"}`); code != 200 {
				t.Fatalf("alice create thread: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "alice", key, "POST", "/api/threads/"+tid+"/runs/wait",
				`{"assistant_id":"support_agent","input":{"user_message":"I need legal advice"}}`); code != 200 || !strings.Contains(body, "__interrupt__") {
				t.Fatalf("alice runs/wait: %d %s", code, body)
			}
			sum := sha256.Sum256([]byte(tid))
			hexID := hex.EncodeToString(sum[:16])
			if code, body := doAs(t, tr, "bob", key, "POST", "/api/threads", `{"thread_id":"`+hexID+`"}`); code != 200 {
				t.Fatalf("bob create the hex thread: %d %s", code, body)
			}
			// Bob's durable run on his thread is his own: before, it was refused as "in
			// progress" and his resume answered alice's approval.
			if code, body := doAs(t, tr, "bob", key, "POST", "/api/threads/"+hexID+"/runs/wait",
				`{"assistant_id":"support_agent","input":{"user_message":"bob needs legal help"}}`); code != 200 || !strings.Contains(body, "__interrupt__") {
				t.Fatalf("bob runs/wait on the hex thread: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "bob", key, "GET", "/api/threads/"+hexID+"/state", ""); code != 200 || strings.Contains(body, "I need legal advice") {
				t.Errorf("bob's hex thread shows alice's run: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "bob", key, "POST", "/api/threads/"+hexID+"/runs/wait",
				`{"assistant_id":"support_agent","command":{"resume":{"approved":true,"reviewer":"bob"}}}`); code != 200 || strings.Contains(body, "I need legal advice") {
				t.Errorf("bob's resume through the hex thread: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "bob", key, "DELETE", "/api/threads/"+hexID, ""); code != 204 {
				t.Fatalf("bob delete the hex thread: %d %s", code, body)
			}
			code, body := doAs(t, tr, "alice", key, "GET", "/api/threads/"+tid+"/state", "")
			if code != 200 || !strings.Contains(body, `"approval"`) {
				t.Fatalf("alice's run after bob's attempts: %d %s, want it still waiting for approval", code, body)
			}

			// Squatting: the id of a thread's run is reserved before the thread's first run.
			next := "next-" + tr.Name
			if code, body := doAs(t, tr, "alice", key, "POST", "/api/threads", `{"thread_id":"`+next+`"}`); code != 200 {
				t.Fatalf("alice create thread: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "bob", key, "POST", "/api/graphs/support_agent/runs",
				`{"instance_id":"thread-`+next+`","input":{"user_message":"hi"}}`); code != 400 {
				t.Fatalf("bob squats thread-%s: %d %s, want 400", next, code, body)
			}
			if code, body := doAs(t, tr, "alice", key, "POST", "/api/threads/"+next+"/runs/wait",
				`{"assistant_id":"support_agent","input":{"user_message":"I need legal advice"}}`); code != 200 || !strings.Contains(body, "__interrupt__") {
				t.Fatalf("alice's first durable run on her thread: %d %s", code, body)
			}
			code, body = doAs(t, tr, "alice", key, "POST", "/api/threads/"+next+"/runs/wait",
				`{"assistant_id":"support_agent","command":{"resume":{"approved":true,"reviewer":"alice"}}}`)
			if code != 200 || !strings.Contains(body, "Reviewer: alice") {
				t.Fatalf("alice resumes her own run: %d %s", code, body)
			}
			var hist []json.RawMessage
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				code, body = doAs(t, tr, "alice", key, "GET", "/api/runs/thread-"+next+"/history", "")
				if code == 200 || time.Now().After(deadline) {
					break
				}
			}
			if code != 200 || json.Unmarshal([]byte(body), &struct {
				Events *[]json.RawMessage `json:"events"`
			}{&hist}) != nil || len(hist) == 0 {
				t.Fatalf("alice reads her thread's run history: %d %s", code, body)
			}
		})
	}
}
