package runsapi_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestService_DotSegmentIDs_RefusedBeforeRuns: "." and ".." are refused as instance ids
// through both transports — 400 at start, 404 on every route that looks a run up, whether
// the path carries them percent-encoded or not — and nothing reaches the runs.
func TestService_DotSegmentIDs_RefusedBeforeRuns(t *testing.T) {
	var calls atomic.Int64
	count := func() { calls.Add(1) }
	runs := &fakeRuns{
		start: func(_ context.Context, req engine.StartRunRequest) (engine.Run, error) {
			count()
			return pendingRun(req.InstanceID), nil
		},
		get:    func(context.Context, string) (engine.Run, error) { count(); return engine.Run{}, engine.ErrRunNotFound },
		raise:  func(context.Context, string, string, json.RawMessage) error { count(); return engine.ErrRunNotFound },
		cancel: func(context.Context, string, string) error { count(); return engine.ErrRunNotFound },
		purge:  func(context.Context, string) error { count(); return engine.ErrRunNotFound },
		history: func(context.Context, string, string, int) (engine.HistoryList, error) {
			count()
			return engine.HistoryList{}, engine.ErrRunNotFound
		},
	}
	const notFound = `{"error": "instance not found"}`
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, id := range []string{".", ".."} {
				body := `{"instance_id": "` + id + `"}`
				runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", body).
					Expect(t, "start "+id, 400, `{"error": "invalid instance_id"}`)
			}
			for _, seg := range []string{"%2E", "%2e", "%2E%2E", "%2e%2E", ".%2E"} {
				for _, c := range []struct{ method, path string }{
					{"GET", "/api/runs/" + seg},
					{"DELETE", "/api/runs/" + seg},
					{"POST", "/api/runs/" + seg + "/cancel"},
					{"POST", "/api/runs/" + seg + "/events/go"},
					{"GET", "/api/runs/" + seg + "/history"},
				} {
					runsapitest.Call(t, tr, c.method, c.path, "").Expect(t, c.method+" "+c.path, 404, notFound)
				}
			}
			if n := calls.Load(); n != 0 {
				t.Fatalf("%d calls reached the runs", n)
			}
			// A lookalike that survives encoding is an ordinary id and reaches the runs.
			runsapitest.Call(t, tr, "GET", "/api/runs/%252E", "").Expect(t, "GET %2E literally", 404, notFound)
			if n := calls.Swap(0); n != 1 {
				t.Fatalf("%d calls reached the runs for the id %%2E, want 1", n)
			}
		})
	}
}

// TestService_ThreadRunIDs_ReservedAtStart: the ids of threads' durable runs ("thread-…",
// "thread~…") cannot be started through the runs API, through both transports, with
// isolation on and off, so no caller takes a thread's run before the thread does; nothing
// reaches the runs. Other ids that merely contain "thread" start as before.
func TestService_ThreadRunIDs_ReservedAtStart(t *testing.T) {
	var starts atomic.Int64
	runs := &fakeRuns{
		start: func(_ context.Context, req engine.StartRunRequest) (engine.Run, error) {
			starts.Add(1)
			return pendingRun(req.InstanceID), nil
		},
		get: func(context.Context, string) (engine.Run, error) { return engine.Run{}, engine.ErrRunNotFound },
	}
	const reserved = `{"error": "invalid instance_id: ids starting with 'thread-' or 'thread~' are reserved for the durable runs of threads"}`
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, id := range []string{"thread-t1", "thread-", "thread~0d4e2ca9e9cbced7a7a5380eb29e1a37", runsapi.ThreadRunID("a/b")} {
				runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id": "`+id+`"}`).
					Expect(t, "start "+id, 400, reserved)
			}
			if n := starts.Load(); n != 0 {
				t.Fatalf("%d reserved starts reached the runs", n)
			}
			for _, id := range []string{"my-thread-1", "Thread-1", "threads-1"} {
				if res := runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id": "`+id+`"}`); res.Status != 202 {
					t.Errorf("start %s: %d %s, want 202", id, res.Status, res.Body)
				}
			}
			starts.Store(0)
		})
	}
}
