package platform

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func TestThreads_CallerIDs_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := "user-42-" + tr.Name
			r := do(t, tr, "POST", "/api/threads", `{"thread_id":"`+id+`","metadata":{"v":1,"tr":"`+tr.Name+`"}}`)
			if r.status != 200 || !strings.Contains(r.body, `"thread_id": "`+id+`"`) {
				t.Fatalf("create with an id: %d %s", r.status, r.body)
			}
			tests := []struct {
				name, body string
				status     int
				want       string
			}{
				{"raise by default", `{"thread_id":"` + id + `"}`, 409, detail("Thread '" + id + "' already exists")},
				{"raise", `{"thread_id":"` + id + `","if_exists":"raise"}`, 409, detail("Thread '" + id + "' already exists")},
				{"do_nothing answers the existing thread", `{"thread_id":"` + id + `","if_exists":"do_nothing","metadata":{"v":2}}`, 200, `"metadata": {"tr": "` + tr.Name + `", "v": 1}`},
				{"bad if_exists", `{"thread_id":"x","if_exists":"replace"}`, 422, "Validation error: if_exists"},
				{"bad thread id", `{"thread_id":"` + strings.Repeat("x", 257) + `"}`, 400, detail("Thread ID exceeds maximum length of 256 characters")},
				{"thread id not a string", `{"thread_id":1}`, 422, "Validation error: thread_id"},
			}
			for _, tc := range tests {
				r := do(t, tr, "POST", "/api/threads", tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
			}
			if n, _ := f.store.Count(t.Context(), threads.Query{Metadata: map[string]any{"tr": tr.Name}}); n != 1 {
				t.Fatalf("threads with the caller's id: %d, want 1", n)
			}
		})
	}
}

func TestRuns_IfNotExists_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			for _, route := range []string{"runs/wait", "runs/stream", "runs"} {
				tid := "new-" + tr.Name + "-" + strings.ReplaceAll(route, "/", "-")
				path := "/api/threads/" + tid + "/" + route
				if r := do(t, tr, "POST", path, `{"assistant_id":"chat"}`); r.status != 404 {
					t.Fatalf("%s without if_not_exists: %d %s", route, r.status, r.body)
				}
				if r := do(t, tr, "POST", path, `{"assistant_id":"nope","if_not_exists":"create"}`); r.status != 404 {
					t.Fatalf("%s unknown assistant: %d %s", route, r.status, r.body)
				}
				if _, err := f.store.Get(t.Context(), tid); !errors.Is(err, threads.ErrThreadNotFound) {
					t.Fatalf("%s: a refused run created thread %s (%v)", route, tid, err)
				}
				if r := do(t, tr, "POST", path, `{"assistant_id":"chat","if_not_exists":"create"}`); r.status != 200 {
					t.Fatalf("%s with if_not_exists create: %d %s", route, r.status, r.body)
				}
				funchosttest.Eventually(t, "the created thread is idle and bound", func() bool {
					th, err := f.store.Get(t.Context(), tid)
					return err == nil && th.Status == threads.StatusIdle && th.AssistantID == "chat"
				})
				if r := do(t, tr, "POST", path, `{"assistant_id":"chat","if_not_exists":"create"}`); r.status != 200 {
					t.Fatalf("%s on the thread it created: %d %s", route, r.status, r.body)
				}
			}
		})
	}
}

func TestRuns_TemporaryThread_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	uuidRE := regexp.MustCompile(`"thread": "([0-9a-f-]{36})"`)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			before, _ := f.store.Count(t.Context(), threads.Query{})
			r := do(t, tr, "POST", "/api/runs/wait", `{"assistant_id":"chat","input":{"a":1}}`)
			m := uuidRE.FindStringSubmatch(r.body)
			if r.status != 200 || m == nil || !strings.HasPrefix(r.header.Get("Content-Location"), "/api/runs/") {
				t.Fatalf("threadless wait: %d %v %s", r.status, r.header, r.body)
			}
			if _, err := f.store.Get(t.Context(), m[1]); !errors.Is(err, threads.ErrThreadNotFound) {
				t.Fatalf("the temporary thread outlived its run: %v", err)
			}
			if _, err := f.chat.GetState(t.Context(), m[1]); !errors.Is(err, host.ErrThreadNotFound) {
				t.Fatalf("the temporary thread's checkpoints outlived its run: %v", err)
			}
			r = do(t, tr, "POST", "/api/runs/wait", `{"assistant_id":"chat","input":{"a":2},"on_completion":"keep"}`)
			m = uuidRE.FindStringSubmatch(r.body)
			if r.status != 200 || m == nil || r.header.Get("Content-Location") == "" ||
				!strings.HasPrefix(r.header.Get("Content-Location"), "/api/threads/"+m[1]+"/runs/") {
				t.Fatalf("threadless wait, keep: %d %v %s", r.status, r.header, r.body)
			}
			th, err := f.store.Get(t.Context(), m[1])
			if err != nil || th.Status != threads.StatusIdle || th.AssistantID != "chat" || !strings.Contains(string(th.Values), `"a": 2`) {
				t.Fatalf("kept thread: %+v %v", th, err)
			}
			if st, err := f.chat.GetState(t.Context(), m[1]); err != nil || st.Values == nil {
				t.Fatalf("kept thread's state: %+v %v", st, err)
			}
			r = do(t, tr, "POST", "/api/runs/stream", `{"assistant_id":"chat","on_completion":"keep","stream_mode":["values","updates"]}`)
			loc := r.header.Get("Content-Location")
			if r.status != 200 || !strings.HasPrefix(loc, "/api/threads/") || !strings.Contains(r.body, "event: updates\n") {
				t.Fatalf("threadless stream, keep: %d %s %s", r.status, loc, r.body)
			}
			if after, _ := f.store.Count(t.Context(), threads.Query{}); after != before+2 {
				t.Fatalf("threads: %d before, %d after; want the two kept", before, after)
			}
		})
	}
}

// modeGraph emits per mode.
type modeGraph struct{ *plainGraph }

func (modeGraph) Stream(context.Context, host.Request, func(any) error) error {
	return errors.New("single mode is not used here")
}

func (modeGraph) StreamModes(_ context.Context, _ host.Request, modes []string, emit func(string, any) error) error {
	for _, m := range modes {
		if err := emit(m, map[string]string{"mode": m}); err != nil {
			return err
		}
	}
	return nil
}

func TestRuns_StreamModes_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	if err := f.svc.app.Register(modeGraph{&plainGraph{}}, "modes", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", `{"assistant_id":"modes","stream_mode":["values","updates","messages-tuple","values"]}`)
			want := "event: values\ndata: {\"mode\": \"values\"}\n\nevent: updates\ndata: {\"mode\": \"updates\"}\n\n" +
				"event: messages\ndata: {\"mode\": \"messages-tuple\"}\n\nevent: end\ndata: null\n\n"
			if r.status != 200 || !strings.HasSuffix(r.body, want) || strings.Count(r.body, "event: ") != 5 {
				t.Fatalf("modes: %d %q; want the suffix %q", r.status, r.body, want)
			}
			var req RunRequest
			b, _ := json.Marshal(&RunRequest{StreamMode: "values", StreamModes: []string{"values", "updates"}})
			if err := json.Unmarshal(b, &req); err != nil || len(req.modes()) != 2 {
				t.Fatalf("a run request keeps its modes through JSON: %s %v", b, err)
			}
		})
	}
}

func TestState_AtCheckpoint_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			for _, in := range []string{`{"n":1}`, `{"n":2}`} {
				if r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"chat","input":`+in+`}`); r.status != 200 {
					t.Fatalf("run: %d %s", r.status, r.body)
				}
			}
			views, _ := f.chat.GetStateHistory(t.Context(), CheckpointRef{ThreadID: tid})
			older := views[1].Config["configurable"].(map[string]any)["checkpoint_id"].(string)
			path := "/api/threads/" + tid + "/state/checkpoint"
			tests := []struct {
				name, path, body string
				status           int
				want             string
			}{
				{"latest without an id", path, `{"checkpoint":{"thread_id":"` + tid + `"},"subgraphs":false}`, 200, `"echo": {"n": 2}`},
				{"empty body is the latest", path, ``, 200, `"echo": {"n": 2}`},
				{"at an older checkpoint", path, `{"checkpoint":{"thread_id":"` + tid + `","checkpoint_ns":"","checkpoint_id":"` + older + `"}}`, 200, `"echo": {"n": 1}`},
				{"unknown checkpoint", path, `{"checkpoint":{"checkpoint_id":"nope"}}`, 200, `"values": {}`},
				{"thread mismatch", path, `{"checkpoint":{"thread_id":"x"}}`, 422, detail("Checkpoint thread_id 'x' does not match path thread_id '" + tid + "'")},
				{"unknown thread", "/api/threads/nope/state/checkpoint", `{}`, 404, detail("Thread 'nope' not found")},
				{"not an object", path, `[]`, 400, detail("Request body must be a JSON object")},
			}
			for _, tc := range tests {
				r := do(t, tr, "POST", tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
			}
		})
	}
}
