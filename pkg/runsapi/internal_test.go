package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// internalState is the state of the internal test graph.
type internalState struct {
	N int `json:"n"`
}

// internalRegistry is the example registry plus the internal graph "fg_internal".
func internalRegistry(t *testing.T) *durable.Registry {
	t.Helper()
	reg := runsapitest.Registry(t, examples.All)
	b := durable.NewManifestBuilder[internalState]("fg_internal")
	b.SetEntrypoint("a")
	if err := b.AddNode("a", func(context.Context, internalState) (any, error) { return nil, nil }, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterInternal(g); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestService_InternalGraph_AnsweredAsUnknown(t *testing.T) {
	internalRun := pendingRun("hidden")
	internalRun.GraphName = "fg_internal"
	publicRun := pendingRun("shown")
	publicRun.GraphName = "data_pipeline"
	var changed atomic.Int64
	runs := &fakeRuns{
		get: func(_ context.Context, id string) (engine.Run, error) {
			switch id {
			case "hidden":
				return internalRun, nil
			case "shown":
				return publicRun, nil
			}
			return engine.Run{}, engine.ErrRunNotFound
		},
		start: func(context.Context, engine.StartRunRequest) (engine.Run, error) {
			changed.Add(1)
			return pendingRun("x"), nil
		},
		raise:  func(context.Context, string, string, json.RawMessage) error { changed.Add(1); return nil },
		cancel: func(context.Context, string, string) error { changed.Add(1); return nil },
		purge:  func(context.Context, string) error { changed.Add(1); return nil },
		history: func(context.Context, string, string, int) (engine.HistoryList, error) {
			changed.Add(1)
			return engine.HistoryList{}, nil
		},
		list: func(_ context.Context, q engine.RunQuery) (engine.RunList, error) {
			if q.GraphName == "fg_internal" {
				changed.Add(1)
			}
			return engine.RunList{Runs: []engine.Run{internalRun, publicRun, internalRun}, ContinuationToken: "next"}, nil
		},
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{Registry: internalRegistry(t)}) {
		t.Run(tr.Name, func(t *testing.T) {
			changed.Store(0)
			notFound := `{"error": "instance not found"}`
			runsapitest.Call(t, tr, "POST", "/api/graphs/fg_internal/runs", `{"input": {"n": 1}}`).Expect(t, "start", 404, `{"error": "unknown graph 'fg_internal'"}`)
			runsapitest.Call(t, tr, "GET", "/api/runs/hidden", "").Expect(t, "status", 404, notFound)
			runsapitest.Call(t, tr, "POST", "/api/runs/hidden/events/e", `{}`).Expect(t, "event", 404, notFound)
			runsapitest.Call(t, tr, "POST", "/api/runs/hidden/cancel", `{}`).Expect(t, "cancel", 404, notFound)
			runsapitest.Call(t, tr, "GET", "/api/runs/hidden/history", "").Expect(t, "history", 404, notFound)
			runsapitest.Call(t, tr, "DELETE", "/api/runs/hidden", "").Expect(t, "purge", 404, notFound)
			runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id": "hidden"}`).Expect(t, "start with its id", 409,
				`{"error": "instance already exists", "instance_id": "hidden"}`) // what the run is stays hidden
			runsapitest.Call(t, tr, "GET", "/api/runs?graph_name=fg_internal", "").Expect(t, "list internal", 200, `{"runs": [], "continuation_token": null}`)
			if changed.Load() != 0 {
				t.Fatalf("%d refused calls reached the engine", changed.Load())
			}
			res := runsapitest.Call(t, tr, "GET", "/api/runs", "")
			res.Expect(t, "list", 200, "")
			if runs := string(res.Field(t, "runs")); !strings.Contains(runs, `"shown"`) || strings.Contains(runs, `"hidden"`) {
				t.Fatalf("list = %s, want only the public run", res.Body)
			}
			if res.Field(t, "continuation_token") == nil || string(res.Field(t, "continuation_token")) == "null" {
				t.Fatalf("list lost its continuation token: %s", res.Body)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs/shown/history", "").Expect(t, "public history", 200, "")
			for _, path := range []string{"/api/health", "/api/openapi.json"} {
				if res := runsapitest.Call(t, tr, "GET", path, ""); res.Status != 200 || strings.Contains(res.Body, "fg_internal") {
					t.Fatalf("%s names the internal graph: %s", path, res.Body)
				}
			}
		})
	}
}

// Issue #32: an instance that lacks a run's graph version (a rolling deploy) cannot check an
// event for it: 503 with Retry-After, so the client sends it again (to an instance that has
// the version), never a 202 for an event nobody checked.
func TestService_EventOnAVersionNotHere_503RetryAfter(t *testing.T) {
	missing := &engine.VersionUnavailableError{Graph: "data_pipeline", Version: "1", Hash: "0123456789abcdef"}
	runs := &fakeRuns{
		get:   func(_ context.Context, id string) (engine.Run, error) { return pendingRun(id), nil },
		raise: func(context.Context, string, string, json.RawMessage) error { return missing },
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			res := runsapitest.Call(t, tr, "POST", "/api/runs/r/events/approval", `{"approved": "unchecked"}`)
			res.Expect(t, "event", 503, `{"error": "graph 'data_pipeline' version '1' (graph_hash '0123456789abcdef') is not registered on this instance, which cannot check the event: retry later"}`)
			if got := res.Header.Get("Retry-After"); got != runsapi.RetryAfterBusy {
				t.Errorf("Retry-After %q, want %q", got, runsapi.RetryAfterBusy)
			}
		})
	}
}

// Contention on one run (engine.ErrConflict: its head kept changing) is a 503 with
// Retry-After on every writing route, never a 500.
func TestService_HeadKeepsChanging_503RetryAfter(t *testing.T) {
	busy := fmt.Errorf("head keeps changing: %w", engine.ErrConflict)
	runs := &fakeRuns{
		get:    func(_ context.Context, id string) (engine.Run, error) { return pendingRun(id), nil },
		start:  func(context.Context, engine.StartRunRequest) (engine.Run, error) { return engine.Run{}, busy },
		raise:  func(context.Context, string, string, json.RawMessage) error { return busy },
		cancel: func(context.Context, string, string) error { return busy },
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, c := range []struct{ path, body string }{
				{"/api/graphs/data_pipeline/runs", `{"instance_id": "r"}`},
				{"/api/runs/r/events/approval", `{}`},
				{"/api/runs/r/cancel", `{}`},
			} {
				res := runsapitest.Call(t, tr, "POST", c.path, c.body)
				res.Expect(t, c.path, 503, `{"error": "instance is busy, retry later"}`)
				if got := res.Header.Get("Retry-After"); got != runsapi.RetryAfterBusy {
					t.Errorf("%s: Retry-After %q, want %q", c.path, got, runsapi.RetryAfterBusy)
				}
			}
		})
	}
}
