package platform

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

func TestThreads_Contract_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			r := do(t, tr, "POST", "/api/threads", `{"metadata":{"user":"ann","tr":"`+tr.Name+`"},"ttl":5}`)
			var th threadBody
			if err := json.Unmarshal([]byte(r.body), &th); r.status != 200 || err != nil {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			if th.Status != "idle" || th.AssistantID != nil || string(th.Values) != "null" || len(th.ThreadID) != 36 ||
				!strings.HasSuffix(th.CreatedAt, "Z") || th.Metadata["user"] != "ann" || !strings.HasSuffix(r.body, `"interrupts": {}}`) {
				t.Fatalf("create: %s", r.body)
			}
			id := th.ThreadID
			other := newThread(t, tr, "")
			tests := []struct {
				name, method, path, body string
				status                   int
				want                     string
			}{
				{"create non-object", "POST", "/api/threads", `[]`, 422, "Validation error:"},
				{"create bad metadata", "POST", "/api/threads", `{"metadata":1}`, 422, "Validation error: metadata"},
				{"create invalid JSON", "POST", "/api/threads", `{"a":NaN}`, 400, detail("Invalid JSON body")},
				{"get", "GET", "/api/threads/" + id, "", 200, `"thread_id": "` + id + `"`},
				{"get unknown", "GET", "/api/threads/nope", "", 404, detail("Thread 'nope' not found")},
				{"get invalid id", "GET", "/api/threads/" + strings.Repeat("x", 257), "", 400, detail("Thread ID exceeds maximum length of 256 characters")},
				{"patch merges", "PATCH", "/api/threads/" + id, `{"metadata":{"n":1}}`, 200, `"metadata": {"n": 1, "tr": "` + tr.Name + `", "user": "ann"}`},
				{"patch without metadata", "PATCH", "/api/threads/" + id, ``, 200, `"n": 1`},
				{"patch unknown", "PATCH", "/api/threads/nope", `{"metadata":{}}`, 404, detail("Thread 'nope' not found")},
				{"patch bad", "PATCH", "/api/threads/" + id, `{"metadata":[]}`, 422, "Validation error: metadata"},
				{"search by metadata", "POST", "/api/threads/search", `{"metadata":{"user":"ann","tr":"` + tr.Name + `"}}`, 200, `"thread_id": "` + id + `"`},
				{"search by status", "POST", "/api/threads/search", `{"status":"busy"}`, 200, `[]`},
				{"search bad status", "POST", "/api/threads/search", `{"status":"nap"}`, 422, "Validation error: status"},
				{"search non-object", "POST", "/api/threads/search", `[]`, 400, detail("Request body must be a JSON object")},
				{"search unsupported", "POST", "/api/threads/search", `{"sort_by":"x","values":{},"ids":[]}`, 501, detail("Unsupported filter(s): ids, sort_by, values")},
				{"search limit", "POST", "/api/threads/search", `{"limit":0}`, 422, "Validation error: limit"},
				{"count by metadata", "POST", "/api/threads/count", `{"metadata":{"tr":"` + tr.Name + `"}}`, 200, `1`},
				{"count unsupported", "POST", "/api/threads/count", `{"select":["x"]}`, 501, detail("Unsupported filter(s): select")},
				{"delete unknown", "DELETE", "/api/threads/nope", "", 404, detail("Thread 'nope' not found")},
				{"delete", "DELETE", "/api/threads/" + other, "", 204, ""},
				{"get deleted", "GET", "/api/threads/" + other, "", 404, detail("Thread '" + other + "' not found")},
			}
			for _, tc := range tests {
				r := do(t, tr, tc.method, tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
			}
			// Newest first.
			third := newThread(t, tr, `{"metadata":{"tr":"`+tr.Name+`"}}`)
			r = do(t, tr, "POST", "/api/threads/search", `{"metadata":{"tr":"`+tr.Name+`"}}`)
			if strings.Index(r.body, third) > strings.Index(r.body, id) {
				t.Errorf("search is not newest first: %s", r.body)
			}
			if r := do(t, tr, "POST", "/api/threads/search", `{"metadata":{"tr":"`+tr.Name+`"},"limit":1,"offset":1}`); !strings.Contains(r.body, id) || strings.Contains(r.body, third) {
				t.Errorf("paging: %s", r.body)
			}
		})
	}
}

func TestThreadDelete_RemovesCheckpoints(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	tr := f.trs[0]
	id := newThread(t, tr, "")
	if r := do(t, tr, "POST", "/api/threads/"+id+"/runs/wait", `{"assistant_id":"chat"}`); r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	if _, err := f.chat.GetState(t.Context(), id); err != nil {
		t.Fatalf("no checkpoint after the run: %v", err)
	}
	if r := do(t, tr, "DELETE", "/api/threads/"+id, ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if _, err := f.chat.GetState(t.Context(), id); err == nil {
		t.Fatal("checkpoints survived the thread's deletion")
	}
}

func TestState_Contract_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{MaxInputDepth: 3}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			unbound := newThread(t, tr, "")
			fresh := newThread(t, tr, "")
			bound := newThread(t, tr, "")
			plain := newThread(t, tr, "")
			for tid, a := range map[string]string{bound: "chat", plain: "plain"} {
				if r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"`+a+`","input":{"q":1}}`); r.status != 200 {
					t.Fatalf("run: %d %s", r.status, r.body)
				}
			}
			// A thread bound by a run whose graph saved nothing reads as empty state.
			if _, err := f.store.Acquire(t.Context(), fresh, "chat", nil, f.svc.now()); err != nil {
				t.Fatal(err)
			}
			_ = f.store.Release(t.Context(), fresh, "idle", nil, f.svc.now())
			tests := []struct {
				name, method, path, body string
				status                   int
				want                     string
			}{
				{"state unknown thread", "GET", "/api/threads/nope/state", "", 404, detail("Thread 'nope' not found")},
				{"state unbound", "GET", "/api/threads/" + unbound + "/state", "", 409, detail("Thread '" + unbound + "' is not bound to any assistant. Run a graph on this thread first.")},
				{"state unsupported", "GET", "/api/threads/" + plain + "/state", "", 409, detail("Graph 'plain' does not support state retrieval")},
				{"state empty", "GET", "/api/threads/" + fresh + "/state", "", 200,
					`{"values": {}, "next": [], "checkpoint": {"thread_id": "` + fresh + `", "checkpoint_ns": "", "checkpoint_id": null, "checkpoint_map": null}, "metadata": null, "created_at": null, "parent_checkpoint": null, "tasks": [], "interrupts": []}`},
				{"state", "GET", "/api/threads/" + bound + "/state", "", 200, `"checkpoint": {"thread_id": "` + bound + `", "checkpoint_ns": "", "checkpoint_id": "cp`},
				{"update unbound", "POST", "/api/threads/" + unbound + "/state", `{"values":{}}`, 409, "is not bound to any assistant"},
				{"update unsupported", "POST", "/api/threads/" + plain + "/state", `{"values":{}}`, 409, detail("Graph 'plain' does not support state updates")},
				{"update empty body", "POST", "/api/threads/" + bound + "/state", ``, 400, detail("Invalid JSON body")},
				{"update non-object", "POST", "/api/threads/" + bound + "/state", `[]`, 400, detail("Request body must be a JSON object")},
				{"update values missing", "POST", "/api/threads/" + bound + "/state", `{}`, 422, "Validation error: values"},
				{"update values scalar list", "POST", "/api/threads/" + bound + "/state", `{"values":[1]}`, 422, "Validation error: values"},
				{"update too deep", "POST", "/api/threads/" + bound + "/state", `{"values":{"a":{"b":{"c":1}}}}`, 400, detail("Input exceeds maximum nesting depth of 3")},
				{"update list too deep", "POST", "/api/threads/" + bound + "/state", `{"values":[{"a":{"b":1}}]}`, 400, detail("Input exceeds maximum nesting depth of 3")},
				{"update mismatch", "POST", "/api/threads/" + bound + "/state", `{"values":{},"checkpoint":{"thread_id":"x"}}`, 422, detail("Checkpoint thread_id 'x' does not match path thread_id '" + bound + "'")},
				{"update graph not found", "POST", "/api/threads/" + bound + "/state", `{"values":{"fail":"notfound"}}`, 404, "Cannot update state for thread '" + bound + "': no checkpoint x"},
				{"update", "POST", "/api/threads/" + bound + "/state", `{"values":{"k":"v"},"as_node":"n1"}`, 200, `"checkpoint": {"thread_id": "` + bound + `", "checkpoint_ns": "", "checkpoint_id": "cp`},
				{"history unbound", "POST", "/api/threads/" + unbound + "/history", ``, 409, "is not bound to any assistant"},
				{"history unsupported", "POST", "/api/threads/" + plain + "/history", ``, 409, detail("Graph 'plain' does not support state history")},
				{"history not found", "POST", "/api/threads/" + fresh + "/history", ``, 200, `[]`},
				{"history bad limit", "POST", "/api/threads/" + bound + "/history", `{"limit":0}`, 422, "Validation error: limit"},
				{"history non-object", "POST", "/api/threads/" + bound + "/history", `"x"`, 400, detail("Request body must be a JSON object")},
				{"history before mismatch", "POST", "/api/threads/" + bound + "/history", `{"before":{"thread_id":"y"}}`, 422, detail("before checkpoint thread_id 'y' does not match path thread_id '" + bound + "'")},
				{"history checkpoint mismatch", "POST", "/api/threads/" + bound + "/history", `{"checkpoint":{"thread_id":"y"}}`, 422, detail("Checkpoint thread_id 'y' does not match path thread_id '" + bound + "'")},
				{"history unknown before", "POST", "/api/threads/" + bound + "/history", `{"before":"zzz"}`, 200, `[]`},
				{"history metadata too deep", "POST", "/api/threads/" + bound + "/history", `{"metadata":{"a":{"b":{"c":1}}}}`, 400, detail("Input exceeds maximum nesting depth of 3")},
			}
			for _, tc := range tests {
				r := do(t, tr, tc.method, tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
			}
			// History: newest first, before, metadata filter, limit.
			var hist []threadStateBody
			r := do(t, tr, "POST", "/api/threads/"+bound+"/history", "")
			if err := json.Unmarshal([]byte(r.body), &hist); err != nil || len(hist) != 2 {
				t.Fatalf("history: %d %s", r.status, r.body)
			}
			if hist[0].Metadata["source"] != "update:n1" || hist[1].Metadata["source"] != "loop" || hist[0].ParentCheckpoint == nil ||
				*hist[0].ParentCheckpoint.CheckpointID != *hist[1].Checkpoint.CheckpointID {
				t.Fatalf("history order or parents: %s", r.body)
			}
			newest := *hist[0].Checkpoint.CheckpointID
			for body, want := range map[string]int{
				`{"before":"` + newest + `"}`:                   1,
				`{"before":{"checkpoint_id":"` + newest + `"}}`: 1,
				`{"metadata":{"source":"loop"}}`:                1,
				`{"metadata":{"source":"none"}}`:                0,
				`{"limit":1}`:                                   1,
				`{"checkpoint":{"thread_id":"` + bound + `"}}`:  2,
			} {
				var got []threadStateBody
				r := do(t, tr, "POST", "/api/threads/"+bound+"/history", body)
				if err := json.Unmarshal([]byte(r.body), &got); err != nil || len(got) != want {
					t.Errorf("history %s: %s, want %d entries", body, r.body, want)
				}
			}
		})
	}
}
