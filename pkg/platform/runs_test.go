package platform

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func TestRuns_Wait_Contract_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{MaxInputNodes: 5}, func(g *memGraph) {
		base := g.invoke
		g.invoke = func(ctx context.Context, req host.Request) (any, error) {
			if strings.Contains(string(req.Input), "boom") {
				return nil, errors.New("secret failure text")
			}
			if strings.Contains(string(req.Input), "gone") {
				return nil, &host.ClientError{Status: 404, Message: "Order 'x' not found", Err: errors.New("secret cause")}
			}
			if base != nil {
				return base(ctx, req)
			}
			return map[string]any{"config": json.RawMessage(req.Config.Raw), "context": RunContext(ctx)}, nil
		}
	})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, `{"metadata":{"a":1}}`)
			busy := newThread(t, tr, "")
			if _, err := f.store.Acquire(t.Context(), busy, "chat", nil, f.svc.now()); err != nil {
				t.Fatal(err)
			}
			wait := "/api/threads/" + tid + "/runs/wait"
			tests := []struct {
				name, path, body string
				status           int
				want             string
			}{
				{"invalid thread id", "/api/threads/%20%7F/runs/wait", `{}`, 400, "Thread ID must contain only printable ASCII characters"},
				{"invalid JSON", wait, `{`, 400, detail("Invalid JSON body")},
				{"empty body", wait, ``, 400, detail("Invalid JSON body")},
				{"threaded non-object is 422", wait, `[]`, 422, "Validation error:"},
				{"assistant missing", wait, `{}`, 422, "Validation error: assistant_id"},
				{"input not object", wait, `{"assistant_id":"chat","input":[1]}`, 422, "Validation error: input"},
				{"bad stream_mode", wait, `{"assistant_id":"chat","stream_mode":3}`, 422, "Validation error: stream_mode"},
				{"bad strategy", wait, `{"assistant_id":"chat","multitask_strategy":"x"}`, 422, "Validation error: multitask_strategy"},
				{"invalid assistant name", wait, `{"assistant_id":"9x"}`, 400, "Invalid graph name '9x'."},
				{"interrupt_before", wait, `{"assistant_id":"chat","interrupt_before":"*","webhook":"u"}`, 501, detail("Interrupt-before is not supported in this release.")},
				{"interrupt_after", wait, `{"assistant_id":"chat","interrupt_after":["a"]}`, 501, detail("Interrupt-after is not supported in this release.")},
				{"webhook", wait, `{"assistant_id":"chat","webhook":"u","command":{}}`, 501, detail("Webhook callbacks are not supported in this release.")},
				{"bad on_completion", wait, `{"assistant_id":"chat","on_completion":"drop"}`, 422, "Validation error: on_completion"},
				{"after_seconds", wait, `{"assistant_id":"chat","after_seconds":1.5}`, 501, detail("Delayed runs are not supported in this release.")},
				{"bad if_not_exists", wait, `{"assistant_id":"chat","if_not_exists":"maybe"}`, 422, "Validation error: if_not_exists"},
				{"if_not_exists reject", "/api/threads/nope/runs/wait", `{"assistant_id":"chat","if_not_exists":"reject"}`, 404, detail("Thread 'nope' not found")},
				{"checkpoint_id", wait, `{"assistant_id":"chat","checkpoint_id":"c"}`, 501, detail("Checkpoint resumption is not supported in this release.")},
				{"command", wait, `{"assistant_id":"chat","command":{"resume":1}}`, 501, detail("Command-based resumption is not supported in this release.")},
				{"feedback_keys", wait, `{"assistant_id":"chat","feedback_keys":["k"]}`, 501, detail("Feedback keys are not supported in this release.")},
				{"enqueue on wait", wait, `{"assistant_id":"chat","multitask_strategy":"enqueue"}`, 501, detail("Multitask strategy 'enqueue' is not supported; only 'reject' is available.")},
				{"nulls are absent", wait, `{"assistant_id":"nope","webhook":null,"command":null}`, 404, detail("Assistant 'nope' not found")},
				{"thread missing before assistant", "/api/threads/nope/runs/wait", `{"assistant_id":"nope"}`, 404, detail("Thread 'nope' not found")},
				{"too many nodes", wait, `{"assistant_id":"chat","input":{"a":[1,2,3,4,5]}}`, 400, detail("Input exceeds maximum node count of 5")},
				{"config nodes", wait, `{"assistant_id":"chat","config":{"a":[1,2,3,4,5]}}`, 400, detail("Input exceeds maximum node count of 5")},
				{"busy", "/api/threads/" + busy + "/runs/wait", `{"assistant_id":"chat"}`, 409, detail("Thread '" + busy + "' is already busy. Concurrent runs are not supported (multitask_strategy=reject).")},
				{"success", wait, `{"assistant_id":"chat","input":{"q":"é"},"config":{"configurable":{"thread_id":"other","k":"v"},"tags":["x"]},"context":{"c":1},"metadata":{"b":2}}`, 200,
					`{"config": {"configurable": {"k": "v", "thread_id": "` + tid + `"}, "tags": ["x"]}, "context": {"c": 1}}`},
				{"bound to another assistant", wait, `{"assistant_id":"plain"}`, 409, detail("Thread '" + tid + "' is bound to assistant 'chat', cannot run with 'plain'")},
				{"failure", wait, `{"assistant_id":"chat","input":{"boom":1}}`, 500, detail("Graph execution failed")},
				{"graph blames the client", wait, `{"assistant_id":"chat","input":{"gone":1}}`, 404, detail("Order 'x' not found")},
			}
			for _, tc := range tests {
				r := do(t, tr, "POST", tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
				if strings.Contains(r.body, "secret") {
					t.Errorf("%s: leaked the graph error: %s", tc.name, r.body)
				}
				if tc.name == "success" && !regexp.MustCompile(`^/api/threads/`+tid+`/runs/[0-9a-f-]{36}$`).MatchString(r.header.Get("Content-Location")) {
					t.Errorf("Content-Location = %q", r.header.Get("Content-Location"))
				}
			}
			th, _ := f.store.Get(t.Context(), tid)
			if th.Status != threads.StatusError || th.AssistantID != "chat" || th.Metadata["b"] != 2.0 || th.Metadata["a"] != 1.0 ||
				!strings.Contains(string(th.Values), `"context": {"c": 1}`) {
				t.Fatalf("thread after runs: %+v %s", th, th.Values)
			}
			if r := do(t, tr, "POST", wait, `{"assistant_id":"chat","input":{}}`); r.status != 200 {
				t.Fatalf("run after failure: %d %s", r.status, r.body)
			}
			if th, _ := f.store.Get(t.Context(), tid); th.Status != threads.StatusIdle {
				t.Fatalf("a successful run must return the thread to idle: %s", th.Status)
			}
		})
	}
}

func TestRuns_Threadless_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tests := []struct {
				name, path, body string
				status           int
				want             string
			}{
				{"non-object", "/api/runs/wait", `[]`, 400, detail("Request body must be a JSON object")},
				{"unknown assistant", "/api/runs/wait", `{"assistant_id":"nope"}`, 404, detail("Assistant 'nope' not found")},
				{"checkpointed graph on a temporary thread", "/api/runs/wait", `{"assistant_id":"locked","input":{"z":1}}`, 200, `{"z": 1}`},
				{"thread id refused", "/api/runs/wait", `{"assistant_id":"plain","config":{"configurable":{"thread_id":"t"}}}`, 422, detail("thread_id is not allowed on threadless runs")},
				{"object output", "/api/runs/wait", `{"assistant_id":"plain","input":{"x":[1,"é"]}}`, 200, `{"x": [1, "\u00e9"]}`},
				{"scalar output keeps its type", "/api/runs/wait", `{"assistant_id":"plain","input":{"scalar":1}}`, 200, `{"result": 42}`},
				{"chat on a temporary thread", "/api/runs/wait", `{"assistant_id":"chat","input":{"y":1},"on_completion":"delete"}`, 200, `^\{"context": null, "echo": \{"y": 1\}, "thread": "[0-9a-f-]{36}"\}$`},
				{"stream on a temporary thread", "/api/runs/stream", `{"assistant_id":"chat"}`, 200, "event: values\ndata: {\"mode\": \"values\", \"n\": 1}"},
				{"stream on invoke-only", "/api/runs/stream", `{"assistant_id":"locked"}`, 501, detail("Graph 'locked' does not support streaming")},
			}
			for _, tc := range tests {
				r := do(t, tr, "POST", tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
				if tc.status == 200 && !regexp.MustCompile(`^/api/runs/[0-9a-f-]{36}$`).MatchString(r.header.Get("Content-Location")) {
					t.Errorf("%s: Content-Location = %q", tc.name, r.header.Get("Content-Location"))
				}
			}
			if n, _ := f.store.Count(t.Context(), threads.Query{}); n != 0 {
				t.Fatalf("threadless runs touched the thread store: %d threads", n)
			}
		})
	}
}

func TestRuns_Stream_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{MaxStreamResponseBytes: 200}, func(g *memGraph) {
		g.stream = func(ctx context.Context, req host.Request, emit func(any) error) error {
			var in map[string]any
			_ = json.Unmarshal(req.Input, &in)
			switch {
			case in["fail"] != nil:
				_ = emit(map[string]any{"n": 1})
				return errors.New("secret failure")
			case in["big"] != nil:
				for i := 0; ; i++ {
					if err := emit(map[string]any{"chunk": strings.Repeat("x", 40)}); err != nil {
						return err
					}
				}
			}
			for _, c := range []any{map[string]any{"n": 1, "mode": req.StreamMode}, "two", []int{3}} {
				if err := emit(c); err != nil {
					return err
				}
			}
			return nil
		}
	})
	meta := regexp.MustCompile(`^event: metadata\ndata: \{"run_id": "([0-9a-f-]{36})"\}\n\n`)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			path := "/api/threads/" + tid + "/runs/stream"
			r := do(t, tr, "POST", path, `{"assistant_id":"chat","stream_mode":["updates"]}`)
			m := meta.FindStringSubmatch(r.body)
			if r.status != 200 || m == nil || r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" ||
				r.header.Get("Cache-Control") != "no-cache" || r.header.Get("X-Accel-Buffering") != "no" ||
				r.header.Get("Content-Location") != "/api/threads/"+tid+"/runs/"+m[1] {
				t.Fatalf("stream: %d %v %q", r.status, r.header, r.body)
			}
			want := m[0] + "event: updates\ndata: {\"mode\": \"updates\", \"n\": 1}\n\n" +
				"event: updates\ndata: {\"data\": \"two\"}\n\nevent: updates\ndata: {\"data\": [3]}\n\nevent: end\ndata: null\n\n"
			if r.body != want {
				t.Fatalf("stream body:\n%q\nwant\n%q", r.body, want)
			}
			if th, _ := f.store.Get(t.Context(), tid); th.Status != threads.StatusIdle || th.Values != nil || th.AssistantID != "chat" {
				t.Fatalf("thread after stream: %+v", th)
			}
			r = do(t, tr, "POST", path, `{"assistant_id":"chat","input":{"fail":1}}`)
			if !strings.HasSuffix(r.body, "event: values\ndata: {\"n\": 1}\n\nevent: error\ndata: {\"error\": \"stream processing failed\"}\n\nevent: end\ndata: null\n\n") {
				t.Fatalf("failed stream: %q", r.body)
			}
			if th, _ := f.store.Get(t.Context(), tid); th.Status != threads.StatusError {
				t.Fatalf("failed stream left status %s", th.Status)
			}
			r = do(t, tr, "POST", path, `{"assistant_id":"chat","input":{"big":1}}`)
			if strings.Count(r.body, "event: error") != 1 || !strings.HasSuffix(r.body,
				"event: error\ndata: {\"error\": \"stream response exceeded max buffered size (200 bytes)\"}\n\nevent: end\ndata: null\n\n") {
				t.Fatalf("overflow: %q", r.body)
			}
			if n := len(r.body) - len("event: error\ndata: {\"error\": \"stream response exceeded max buffered size (200 bytes)\"}\n\nevent: end\ndata: null\n\n"); n > 200 {
				t.Fatalf("overflowed stream kept %d bytes of frames, cap 200", n)
			}
			for name, tc := range map[string]struct {
				path, body string
				status     int
				want       string
			}{
				"each event under every mode": {path, `{"assistant_id":"chat","stream_mode":["a","b","a"]}`, 200,
					"event: a\ndata: {\"mode\": \"a\", \"n\": 1}\n\nevent: b\ndata: {\"mode\": \"a\", \"n\": 1}\n\nevent: a\ndata: \"two\"\n\nevent: b\ndata: \"two\"\n\n"}, // as is; then the 200-byte cap
				"thread first":  {"/api/threads/nope/runs/stream", `{"assistant_id":"chat","stream_mode":["a","b"]}`, 404, detail("Thread 'nope' not found")},
				"assistant 404": {path, `{"assistant_id":"nope","stream_mode":["a","b"]}`, 404, detail("Assistant 'nope' not found")},
				"cannot stream": {"/api/threads/" + newThread(t, tr, "") + "/runs/stream", `{"assistant_id":"plain"}`, 501, detail("Graph 'plain' does not support streaming")},
				"threadless":    {"/api/runs/stream", `{"assistant_id":"plain"}`, 501, detail("Graph 'plain' does not support streaming")},
			} {
				r := do(t, tr, "POST", tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", name, r.status, r.body, tc.status, tc.want)
				}
			}
		})
	}
}
