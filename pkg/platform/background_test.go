package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func TestBackgroundRuns_BothTransports(t *testing.T) {
	release := make(chan struct{})
	f := newFixture(t, host.Options{}, func(g *memGraph) {
		g.invoke = func(ctx context.Context, req host.Request) (any, error) {
			if strings.Contains(string(req.Input), "hold") {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return map[string]any{"input": json.RawMessage(req.Input)}, nil
		}
	})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			base := "/api/threads/" + tid + "/runs"
			r := do(t, tr, "POST", base, `{"assistant_id":"chat","input":{"n":1},"metadata":{"m":1}}`)
			var run runBody
			if err := json.Unmarshal([]byte(r.body), &run); r.status != 200 || err != nil || run.Status != "pending" || run.ThreadID != tid ||
				run.AssistantID != "chat" || r.header.Get("Content-Location") != base+"/"+run.RunID {
				t.Fatalf("create: %d %v %s", r.status, r.header, r.body)
			}
			if r := do(t, tr, "GET", base+"/"+run.RunID+"/join", ""); r.status != 200 || r.body != `{"input": {"n": 1}}` {
				t.Fatalf("join: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "GET", base+"/"+run.RunID, ""); r.status != 200 || !strings.Contains(r.body, `"status": "success"`) {
				t.Fatalf("get: %d %s", r.status, r.body)
			}
			// A held run keeps the thread busy: reject answers 409, enqueue queues behind it.
			held := do(t, tr, "POST", base, `{"assistant_id":"chat","input":{"hold":1}}`)
			var heldRun runBody
			_ = json.Unmarshal([]byte(held.body), &heldRun)
			if r := do(t, tr, "POST", base, `{"assistant_id":"chat"}`); r.status != 409 ||
				r.body != detail("Thread '"+tid+"' is already busy. Concurrent runs are not supported (multitask_strategy=reject).") {
				t.Fatalf("reject: %d %s", r.status, r.body)
			}
			queued := do(t, tr, "POST", base, `{"assistant_id":"chat","input":{"after":1},"multitask_strategy":"enqueue"}`)
			var queuedRun runBody
			_ = json.Unmarshal([]byte(queued.body), &queuedRun)
			if queued.status != 200 {
				t.Fatalf("enqueue: %d %s", queued.status, queued.body)
			}
			if r := do(t, tr, "POST", base, `{"assistant_id":"chat","multitask_strategy":"rollback"}`); r.status != 501 ||
				r.body != detail("Multitask strategy 'rollback' is not supported; only 'reject' and 'enqueue' are available.") {
				t.Fatalf("rollback: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "POST", base, `{"assistant_id":"plain","multitask_strategy":"enqueue"}`); r.status != 409 || !strings.Contains(r.body, "is bound to assistant 'chat'") {
				t.Fatalf("bound: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "POST", base+"/"+heldRun.RunID+"/cancel?wait=1&action=interrupt", ""); r.status != 204 {
				t.Fatalf("cancel: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "GET", base+"/"+heldRun.RunID, ""); !strings.Contains(r.body, `"status": "interrupted"`) {
				t.Fatalf("cancelled run: %s", r.body)
			}
			if r := do(t, tr, "GET", base+"/"+queuedRun.RunID+"/join", ""); r.status != 200 || r.body != `{"input": {"after": 1}}` {
				t.Fatalf("join queued: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "POST", base+"/"+queuedRun.RunID+"/cancel", ""); r.status != 409 {
				t.Fatalf("cancel finished: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "POST", base+"/"+queuedRun.RunID+"/cancel?action=rollback", ""); r.status != 501 {
				t.Fatalf("cancel rollback: %d %s", r.status, r.body)
			}
			r = do(t, tr, "GET", base+"?limit=2", "")
			var list []runBody
			if err := json.Unmarshal([]byte(r.body), &list); err != nil || len(list) != 2 || list[0].RunID != queuedRun.RunID || list[1].RunID != heldRun.RunID {
				t.Fatalf("list: %d %s", r.status, r.body)
			}
			for name, c := range map[string]struct {
				method, path string
				status       int
			}{
				"get unknown":    {"GET", base + "/nope", 404},
				"join unknown":   {"GET", base + "/nope/join", 404},
				"cancel unknown": {"POST", base + "/nope/cancel", 404},
				"list unknown":   {"GET", "/api/threads/nope/runs", 404},
				"list bad limit": {"GET", base + "?limit=0", 422},
				"create unknown": {"POST", "/api/threads/nope/runs", 404},
			} {
				body := ""
				if c.method == "POST" && strings.HasSuffix(c.path, "/runs") {
					body = `{"assistant_id":"chat"}`
				}
				if r := do(t, tr, c.method, c.path, body); r.status != c.status {
					t.Errorf("%s: %d %s, want %d", name, r.status, r.body, c.status)
				}
			}
			if th, _ := f.store.Get(t.Context(), tid); th.Status != threads.StatusIdle {
				t.Fatalf("thread after background runs: %s", th.Status)
			}
		})
	}
	close(release)
}

// TestMount_RoutesCoexistWithNativeAndDurableRoutes checks the platform routes against the
// function app's ambiguity rules next to the native routes and the durable runs routes.
func TestMount_RoutesCoexistWithNativeAndDurableRoutes(t *testing.T) {
	app, err := host.New(host.Options{PlatformCompat: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(newMemGraph(), "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	durable := []funchost.HTTPFunction{
		{Name: "start_graph_run", Methods: []string{"POST"}, Route: "graphs/{graph_name}/runs"},
		{Name: "get_run_status", Methods: []string{"GET"}, Route: "runs/{instance_id}"},
		{Name: "purge_run", Methods: []string{"DELETE"}, Route: "runs/{instance_id}"},
		{Name: "list_runs", Methods: []string{"GET"}, Route: "runs"},
		{Name: "cancel_run", Methods: []string{"POST"}, Route: "runs/{instance_id}/cancel"},
		{Name: "get_run_history", Methods: []string{"GET"}, Route: "runs/{instance_id}/history"},
		{Name: "send_run_event", Methods: []string{"POST"}, Route: "runs/{instance_id}/events/{event_name}"},
	}
	for _, fn := range durable {
		fn.Handler = noop
		if err := app.FunctionApp().HandleHTTP(fn); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := Mount(app, Options{})
	if err != nil {
		t.Fatalf("Mount next to native and durable routes: %v", err)
	}
	defer svc.Close()
	if err := app.FunctionApp().WriteFunctions(t.TempDir()); err != nil {
		t.Fatalf("WriteFunctions: %v", err)
	}
	if _, err := Mount(app, Options{}); err == nil {
		t.Fatal("mounting twice must fail")
	}
	off, _ := host.New(host.Options{})
	if _, err := Mount(off, Options{}); err != ErrNotEnabled {
		t.Fatalf("Mount without PlatformCompat: %v", err)
	}
}
