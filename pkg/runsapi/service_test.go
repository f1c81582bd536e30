package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// serveFake serves a service over fake runs through both transports.
func serveFake(t *testing.T, runs engine.Runs, opts runsapi.Options) []funchosttest.Transport {
	t.Helper()
	opts.Runs = runs
	if opts.Registry == nil {
		opts.Registry = runsapitest.Registry(t, examples.All)
	}
	opts.Logger = funchosttest.TestLogger(t)
	svc, err := runsapi.NewService(opts)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatalf("FunctionApp: %v", err)
	}
	return funchosttest.Transports(t, app)
}

func pendingRun(id string) engine.Run {
	return engine.Run{InstanceID: id, RuntimeStatus: engine.StatusPending,
		Input: engine.RunInput{GraphName: "data_pipeline", GraphHash: "6135ea2aa13d431c", InitialState: json.RawMessage(`{}`), Metadata: json.RawMessage(`{}`)}}
}

func TestService_StartRun_FakeRuns_SpecResponses(t *testing.T) {
	var got atomic.Pointer[engine.StartRunRequest]
	var calls atomic.Int64
	runs := &fakeRuns{start: func(_ context.Context, req engine.StartRunRequest) (engine.Run, error) {
		calls.Add(1)
		got.Store(&req)
		switch req.InstanceID {
		case "busy":
			return engine.Run{}, &engine.RunExistsError{InstanceID: "busy", Status: engine.StatusRunning}
		case "boom":
			return engine.Run{}, errors.New("storage said: key=secret")
		case "":
			return pendingRun("generated-id"), nil
		}
		return pendingRun(req.InstanceID), nil
	}}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			base := tr.BaseURL
			tests := []struct {
				name       string
				path, body string
				headers    []string
				wantStatus int
				wantBody   string
				wantCalled bool
			}{
				{name: "accepted with id", path: "/api/graphs/data_pipeline/runs", body: `{"instance_id": "r 1", "input": {"source_url": "u"}, "metadata": {"m": "é"}}`,
					wantStatus: 202, wantCalled: true,
					wantBody: `{"id": "r 1", "statusQueryGetUri": "` + base + `/api/runs/r%201", "sendEventPostUri": "` + base + `/api/runs/r%201/events/{eventName}", "terminatePostUri": "` + base + `/api/runs/r%201/cancel"}`},
				{name: "generated id", path: "/api/graphs/data_pipeline/runs", body: `{}`, wantStatus: 202, wantCalled: true,
					wantBody: `{"id": "generated-id", "statusQueryGetUri": "` + base + `/api/runs/generated-id", "sendEventPostUri": "` + base + `/api/runs/generated-id/events/{eventName}", "terminatePostUri": "` + base + `/api/runs/generated-id/cancel"}`},
				{name: "forwarded https", path: "/api/graphs/data_pipeline/runs", body: `{"instance_id": "x"}`, headers: []string{"X-Forwarded-Proto", "https"},
					wantStatus: 202, wantCalled: true,
					wantBody: `{"id": "x", "statusQueryGetUri": "https://` + hostOf(tr) + `/api/runs/x", "sendEventPostUri": "https://` + hostOf(tr) + `/api/runs/x/events/{eventName}", "terminatePostUri": "https://` + hostOf(tr) + `/api/runs/x/cancel"}`},
				{name: "unknown graph before body", path: "/api/graphs/nope/runs", body: `not json`, wantStatus: 404, wantBody: `{"error": "unknown graph 'nope'"}`},
				{name: "bad body", path: "/api/graphs/data_pipeline/runs", body: `[1]`, wantStatus: 400, wantBody: `{"error": "request body must be valid JSON object"}`},
				{name: "empty body", path: "/api/graphs/data_pipeline/runs", wantStatus: 400, wantBody: `{"error": "request body must be valid JSON object"}`},
				{name: "bad input and metadata", path: "/api/graphs/data_pipeline/runs", body: `{"input": [1, "é"], "metadata": "m"}`, wantStatus: 400,
					wantBody: `{"error": "invalid request body", "details": [{"type": "dict_type", "loc": ["initial_state"], "msg": "Input should be a valid dictionary", "input": [1, "\u00e9"]}, {"type": "dict_type", "loc": ["metadata"], "msg": "Input should be a valid dictionary", "input": "m"}]}`},
				{name: "bad instance id", path: "/api/graphs/data_pipeline/runs", body: `{"instance_id": "a#b"}`, wantStatus: 400, wantBody: `{"error": "invalid instance_id"}`},
				{name: "exists", path: "/api/graphs/data_pipeline/runs", body: `{"instance_id": "busy"}`, wantStatus: 409, wantCalled: true,
					wantBody: `{"error": "instance already exists", "instance_id": "busy", "runtime_status": "Running"}`},
				{name: "internal error hidden", path: "/api/graphs/data_pipeline/runs", body: `{"instance_id": "boom"}`, wantStatus: 500, wantCalled: true,
					wantBody: `{"error": "internal error"}`},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					before := calls.Load()
					res := runsapitest.Call(t, tr, http.MethodPost, tt.path, tt.body, tt.headers...)
					res.Expect(t, tt.name, tt.wantStatus, tt.wantBody)
					if called := calls.Load() > before; called != tt.wantCalled {
						t.Fatalf("StartRun called = %v, want %v", called, tt.wantCalled)
					}
					if tt.wantStatus != 202 {
						return
					}
					var id string
					_ = json.Unmarshal(res.Field(t, "statusQueryGetUri"), &id)
					if loc := res.Header.Get("Location"); loc != id {
						t.Fatalf("Location = %q, want %q", loc, id)
					}
					if ra := res.Header.Get("Retry-After"); ra != "10" {
						t.Fatalf("Retry-After = %q, want 10", ra)
					}
				})
			}
			req := got.Load()
			if req == nil || req.GraphName != "data_pipeline" {
				t.Fatalf("StartRun request = %+v", req)
			}
		})
	}
}

func TestService_StartRun_FakeRuns_PassesDecodedRequest(t *testing.T) {
	reqs := make(chan engine.StartRunRequest, 2)
	runs := &fakeRuns{start: func(_ context.Context, req engine.StartRunRequest) (engine.Run, error) {
		reqs <- req
		return pendingRun("id"), nil
	}}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			runsapitest.Call(t, tr, http.MethodPost, "/api/graphs/support_agent/runs", `{"input": {"user_message": "caf\u00e9", "z": 1}, "metadata": 0, "instance_id": false}`).Expect(t, "start", 202, "")
			req := <-reqs
			want := engine.StartRunRequest{GraphName: "support_agent", Input: json.RawMessage(`{"user_message":"caf\u00e9","z":1}`), Metadata: json.RawMessage(`{}`)}
			if req.GraphName != want.GraphName || req.InstanceID != "" || string(req.Input) != string(want.Input) || string(req.Metadata) != string(want.Metadata) {
				t.Fatalf("request = %+v (input %s, metadata %s), want %+v", req, req.Input, req.Metadata, want)
			}
		})
	}
}

func TestService_RunEndpoints_FakeRuns_SpecResponses(t *testing.T) {
	done := engine.Run{InstanceID: "done", RuntimeStatus: engine.StatusCompleted,
		CustomStatus: json.RawMessage(`{"graph_name":"g","graph_version":"0.1.0","graph_hash":"h","current_node":"n"}`),
		Input:        engine.RunInput{GraphName: "g", GraphHash: "h", InitialState: json.RawMessage(`{"a":"é"}`), Metadata: json.RawMessage(`{}`)},
		Output:       json.RawMessage(`{"graph_name":"g","graph_version":"0.1.0","graph_hash":"h","final_node":"n","state":{"a":"é"}}`)}
	events := make(chan string, 10)
	runs := &fakeRuns{
		get: func(_ context.Context, id string) (engine.Run, error) {
			switch id {
			case "done":
				return done, nil
			case "live":
				return pendingRun("live"), nil
			}
			return engine.Run{}, engine.ErrRunNotFound
		},
		raise: func(_ context.Context, id, name string, payload json.RawMessage) error {
			switch id {
			case "done":
				return &engine.RunFinishedError{InstanceID: id, Status: engine.StatusCompleted}
			case "live":
				events <- name + " " + string(payload)
				return nil
			}
			return engine.ErrRunNotFound
		},
		cancel: func(_ context.Context, id, reason string) error {
			if id == "done" {
				return &engine.RunFinishedError{InstanceID: id, Status: engine.StatusCompleted}
			}
			events <- "cancel " + reason
			return nil
		},
		purge: func(_ context.Context, id string) error {
			switch id {
			case "live":
				return &engine.RunNotFinishedError{InstanceID: id, Status: engine.StatusPending}
			case "done":
				return nil
			}
			return engine.ErrRunNotFound
		},
	}
	oversized := `"` + strings.Repeat("x", 1<<20) + `"` // over the 1 MiB body cap
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			tests := []struct {
				name, method, path, body string
				wantStatus               int
				wantBody                 string
				wantEvent                string
			}{
				{name: "status completed", method: "GET", path: "/api/runs/done", wantStatus: 200,
					wantBody: `{"instance_id": "done", "runtime_status": "Completed", "custom_status": {"graph_name": "g", "graph_version": "0.1.0", "graph_hash": "h", "current_node": "n"}, "input": {"graph_name": "g", "graph_hash": "h", "initial_state": {"a": "\u00e9"}, "current_node": null, "metadata": {}}, "output": {"graph_name": "g", "graph_version": "0.1.0", "graph_hash": "h", "final_node": "n", "state": {"a": "\u00e9"}}}`},
				{name: "status pending", method: "GET", path: "/api/runs/live", wantStatus: 200,
					wantBody: `{"instance_id": "live", "runtime_status": "Pending", "custom_status": null, "input": {"graph_name": "data_pipeline", "graph_hash": "6135ea2aa13d431c", "initial_state": {}, "current_node": null, "metadata": {}}, "output": null}`},
				{name: "status unknown", method: "GET", path: "/api/runs/nope", wantStatus: 404, wantBody: `{"error": "instance not found"}`},
				{name: "event accepted", method: "POST", path: "/api/runs/live/events/approval", body: `{"approved": true}`, wantStatus: 202,
					wantBody: `{"instance_id": "live", "event_name": "approval", "accepted": true}`, wantEvent: `approval {"approved":true}`},
				{name: "event non-JSON body refused", method: "POST", path: "/api/runs/live/events/other", body: `{oops`, wantStatus: 400,
					wantBody: `{"error": "request body must be valid JSON"}`},
				{name: "event empty body is null", method: "POST", path: "/api/runs/live/events/x", wantStatus: 202,
					wantBody: `{"instance_id": "live", "event_name": "x", "accepted": true}`, wantEvent: `x null`},
				{name: "event finished", method: "POST", path: "/api/runs/done/events/approval", body: `{}`, wantStatus: 409,
					wantBody: `{"error": "instance is not running", "instance_id": "done", "runtime_status": "Completed"}`},
				{name: "event unknown", method: "POST", path: "/api/runs/nope/events/approval", body: `{}`, wantStatus: 404, wantBody: `{"error": "instance not found"}`},
				{name: "event oversized, unknown run", method: "POST", path: "/api/runs/nope/events/big", body: oversized, wantStatus: 404, wantBody: `{"error": "instance not found"}`},
				{name: "event oversized, finished run", method: "POST", path: "/api/runs/done/events/big", body: oversized, wantStatus: 409,
					wantBody: `{"error": "instance is not running", "instance_id": "done", "runtime_status": "Completed"}`},
				{name: "event oversized", method: "POST", path: "/api/runs/live/events/big", body: oversized, wantStatus: 413, wantBody: `{"error": "request body too large"}`},
				{name: "cancel default reason", method: "POST", path: "/api/runs/live/cancel", wantStatus: 202,
					wantBody: `{"instance_id": "live", "terminated": true, "reason": "cancel requested by client"}`, wantEvent: "cancel cancel requested by client"},
				{name: "cancel reason kept", method: "POST", path: "/api/runs/live/cancel", body: `{"reason": "caf\u00e9"}`, wantStatus: 202,
					wantBody: `{"instance_id": "live", "terminated": true, "reason": "caf\u00e9"}`, wantEvent: "cancel café"},
				{name: "cancel bad reason", method: "POST", path: "/api/runs/live/cancel", body: `{"reason": 5}`, wantStatus: 400, wantBody: `{"error": "reason must be a string"}`},
				{name: "cancel unknown before bad reason", method: "POST", path: "/api/runs/nope/cancel", body: `{"reason": 5}`, wantStatus: 404, wantBody: `{"error": "instance not found"}`},
				{name: "cancel bad reason before finished", method: "POST", path: "/api/runs/done/cancel", body: `{"reason": null}`, wantStatus: 400, wantBody: `{"error": "reason must be a string"}`},
				{name: "cancel finished", method: "POST", path: "/api/runs/done/cancel", body: `{}`, wantStatus: 409,
					wantBody: `{"error": "instance is not running", "instance_id": "done", "runtime_status": "Completed"}`},
				{name: "purge finished", method: "DELETE", path: "/api/runs/done", wantStatus: 200, wantBody: `{"instance_id": "done", "purged": true}`},
				{name: "purge active", method: "DELETE", path: "/api/runs/live", wantStatus: 409,
					wantBody: `{"error": "instance is still active", "instance_id": "live", "runtime_status": "Pending"}`},
				{name: "purge unknown", method: "DELETE", path: "/api/runs/nope", wantStatus: 404, wantBody: `{"error": "instance not found"}`},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					runsapitest.Call(t, tr, tt.method, tt.path, tt.body).Expect(t, tt.name, tt.wantStatus, tt.wantBody)
					if tt.wantEvent != "" {
						select {
						case got := <-events:
							if got != tt.wantEvent {
								t.Fatalf("runs saw %q, want %q", got, tt.wantEvent)
							}
						case <-time.After(5 * time.Second):
							t.Fatal("runs saw nothing")
						}
					}
					if len(events) > 0 {
						t.Fatalf("unexpected runs call %q", <-events)
					}
				})
			}
		})
	}
}

func TestService_ListAndHistory_FakeRuns_BodiesAndFilters(t *testing.T) {
	created := time.Date(2025, 2, 3, 4, 5, 6, 7, time.UTC)
	queries := make(chan engine.RunQuery, 4)
	runs := &fakeRuns{
		list: func(_ context.Context, q engine.RunQuery) (engine.RunList, error) {
			queries <- q
			r := pendingRun("a")
			r.GraphName, r.GraphVersion, r.GraphHash, r.CreatedAt, r.UpdatedAt = "g", "0.1.0", "h", created, created
			return engine.RunList{Runs: []engine.Run{r}, ContinuationToken: "next"}, nil
		},
		history: func(_ context.Context, id, token string, limit int) (engine.HistoryList, error) {
			if id != "a" {
				return engine.HistoryList{}, engine.ErrRunNotFound
			}
			return engine.HistoryList{Events: []engine.HistoryEvent{
				{Sequence: 1, Type: "run_started", Name: engine.OrchestratorName, Timestamp: created, Data: json.RawMessage(`{"k":1}`)},
				{Sequence: 2, Type: "node_completed", Name: engine.ExecuteNodeName, Node: "extract", Timestamp: created},
			}}, nil
		},
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			res := runsapitest.Call(t, tr, "GET", "/api/runs?graph_name=g&status=Pending&limit=2", "")
			var token string
			if err := json.Unmarshal(res.Field(t, "continuation_token"), &token); err != nil || token == "" || token == "next" {
				t.Fatalf("list token = %s (%v), want the engine's token wrapped", res.Field(t, "continuation_token"), err)
			}
			res.Expect(t, "list", 200,
				`{"runs": [{"instance_id": "a", "runtime_status": "Pending", "graph_name": "g", "graph_version": "0.1.0", "graph_hash": "h", "created_at": "2025-02-03T04:05:06.000000007Z", "last_updated_at": "2025-02-03T04:05:06.000000007Z"}], "continuation_token": "`+token+`"}`)
			if q := <-queries; q.GraphName != "g" || q.Status != engine.StatusPending || q.Limit != 2 || q.ContinuationToken != "" {
				t.Fatalf("query = %+v", q)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs?continuation_token="+token, "").Expect(t, "list page 2", 200, "")
			if q := <-queries; q.ContinuationToken != "next" {
				t.Fatalf("page 2 query token = %q, want the engine's token", q.ContinuationToken)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs?continuation_token=next", "").Expect(t, "engine token as is", 400,
				`{"error": "invalid query parameter 'continuation_token': want the token of a previous page, or none to start over"}`)
			runsapitest.Call(t, tr, "GET", "/api/runs?runtime_status=Failed", "").Expect(t, "runtime_status filter", 200, "")
			if q := <-queries; q.Status != engine.StatusFailed {
				t.Fatalf("runtime_status=Failed: query = %+v, want the Failed filter", q)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs?status=Done", "").Expect(t, "bad status", 400,
				`{"error": "invalid query parameter 'status': want Pending, Running, Completed, Failed or Terminated"}`)
			runsapitest.Call(t, tr, "GET", "/api/runs?limit=5000", "").Expect(t, "bad limit", 400, `{"error": "invalid query parameter 'limit': want an integer from 1 to 1000"}`)
			for _, p := range []string{"created_before=2300-01-01T00:00:00Z", "created_after=1600-01-01T00:00:00Z"} {
				name, _, _ := strings.Cut(p, "=")
				runsapitest.Call(t, tr, "GET", "/api/runs?"+p, "").Expect(t, p, 400, `{"error": "invalid query parameter '`+name+
					`': want a time from 1970-01-01T00:00:00.000000001Z to 2262-04-11T23:47:16.854775807Z"}`)
			}
			if len(queries) != 0 {
				t.Fatal("bad filters reached ListRuns")
			}
			runsapitest.Call(t, tr, "GET", "/api/runs/a/history", "").Expect(t, "history", 200,
				`{"instance_id": "a", "events": [{"sequence": 1, "type": "run_started", "name": "fg_orchestrator", "node": null, "timestamp": "2025-02-03T04:05:06.000000007Z", "data": {"k": 1}}, {"sequence": 2, "type": "node_completed", "name": "fg_execute_node", "node": "extract", "timestamp": "2025-02-03T04:05:06.000000007Z", "data": null}], "continuation_token": null}`)
			runsapitest.Call(t, tr, "GET", "/api/runs/zz/history", "").Expect(t, "history unknown", 404, `{"error": "instance not found"}`)
		})
	}
}

func TestService_Meta_Standalone_HealthAndOpenAPI(t *testing.T) {
	for _, tr := range serveFake(t, &fakeRuns{}, runsapi.Options{Version: "9.9.9"}) {
		t.Run(tr.Name, func(t *testing.T) {
			runsapitest.Call(t, tr, "GET", "/api/health", "").Expect(t, "health", 200,
				`{"ok": true, "registered_graphs": [`+
					`{"graph_name": "data_pipeline", "version": "0.1.0", "graph_hash": "6135ea2aa13d431c", "entrypoint": "extract", "state_model_name": "PipelineState", "nodes": ["extract", "transform", "load"], "events": []}, `+
					`{"graph_name": "content_classifier", "version": "0.1.0", "graph_hash": "`+hashOf(t, "content_classifier")+`", "entrypoint": "classify", "state_model_name": "ContentState", "nodes": ["classify", "handle_question", "handle_complaint", "handle_feedback", "summarize"], "events": []}, `+
					`{"graph_name": "support_agent", "version": "0.1.0", "graph_hash": "af183f226f37e6fc", "entrypoint": "classify_request", "state_model_name": "SupportState", "nodes": ["classify_request", "draft_reply", "finalize_reply"], "events": ["approval"]}, `+
					`{"graph_name": "research_agent", "version": "0.1.0", "graph_hash": "f808bdc33d582085", "entrypoint": "plan", "state_model_name": "ResearchState", "nodes": ["plan", "search", "draft", "review", "publish", "escalate"], "events": ["approval"]}, `+
					`{"graph_name": "reply_writer", "version": "0.1.0", "graph_hash": "`+hashOf(t, "reply_writer")+`", "entrypoint": "compose", "state_model_name": "ReplyState", "nodes": ["compose"], "events": []}]}`)
			res := runsapitest.Call(t, tr, "GET", "/api/openapi.json", "")
			res.Expect(t, "openapi", 200, "")
			id := `{"name": "instance_id", "in": "path", "required": true, "schema": {"type": "string"}}`
			wantPrefix := `{"openapi": "3.0.3", "info": {"title": "funcgraph durable runtime", "version": "9.9.9"}, "paths": {` +
				`"/api/graphs/{graph_name}/runs": {"post": {"summary": "Start a graph run", "parameters": [{"name": "graph_name", "in": "path", "required": true, "schema": {"type": "string"}}]}}, ` +
				`"/api/runs/{instance_id}": {"get": {"summary": "Get run status", "parameters": [` + id + `]}}, ` +
				`"/api/runs/{instance_id}/events/{event_name}": {"post": {"summary": "Raise an external event", "parameters": [` + id + `, {"name": "event_name", "in": "path", "required": true, "schema": {"type": "string"}}]}}, ` +
				`"/api/runs/{instance_id}/cancel": {"post": {"summary": "Terminate a run", "parameters": [` + id + `]}}, ` +
				`"/api/health": {"get": {"summary": "Health"}}}, ` +
				`"components": {"schemas": {"RegisteredGraphs": {"type": "array", "items": {"type": "object"}, "x-afdg-graphs": [{"graph_name": "data_pipeline", `
			if !strings.HasPrefix(res.Body, wantPrefix) {
				t.Fatalf("openapi.json does not start with the spec's document:\n got %s\nwant %s...", res.Body, wantPrefix)
			}
			if !strings.Contains(res.Body, `"nodes": ["compose"], "events": []}]}, "StartRunRequest": {`) || !strings.HasSuffix(res.Body, "}}}") {
				t.Fatalf("openapi.json: RegisteredGraphs is not followed by the body schemas: %s", res.Body)
			}
			if strings.Contains(res.Body, `"responses"`) || strings.Contains(res.Body, "openapi.json") {
				t.Fatalf("openapi.json has responses objects or lists itself")
			}
			var doc any
			if err := json.Unmarshal([]byte(res.Body), &doc); err != nil {
				t.Fatalf("openapi.json is not JSON: %v", err)
			}
		})
	}
}

func hashOf(t *testing.T, name string) string {
	t.Helper()
	g, err := runsapitest.Registry(t, examples.All).Latest(name)
	if err != nil {
		t.Fatal(err)
	}
	return g.Manifest().GraphHash
}

func TestService_AuthFunction_KeysEnforcedOnEveryRoute(t *testing.T) {
	runs := &fakeRuns{get: func(context.Context, string) (engine.Run, error) { return pendingRun("r"), nil }}
	for _, tr := range serveFake(t, runs, runsapi.Options{AuthLevel: funchost.AuthFunction}) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, path := range []string{"/api/health", "/api/openapi.json", "/api/runs/r", "/api/runs"} {
				if res := runsapitest.Call(t, tr, "GET", path, ""); res.Status != http.StatusUnauthorized {
					t.Fatalf("GET %s without key: %d, want 401", path, res.Status)
				}
			}
			runsapitest.Call(t, tr, "GET", "/api/runs/r", "", "x-functions-key", tr.FunctionKey).Expect(t, "with key", 200, "")
		})
	}
}

func TestNewService_Options_ValidatedAndAnonymousWarns(t *testing.T) {
	reg := durable.NewRegistry()
	tests := []struct {
		name    string
		opts    runsapi.Options
		wantErr bool
		wantLog bool
	}{
		{"no runs", runsapi.Options{Registry: reg}, true, false},
		{"no registry", runsapi.Options{Runs: &fakeRuns{}}, true, false},
		{"bad auth", runsapi.Options{Runs: &fakeRuns{}, Registry: reg, AuthLevel: "open"}, true, false},
		{"negative body cap", runsapi.Options{Runs: &fakeRuns{}, Registry: reg, MaxRequestBodyBytes: -1}, true, false},
		{"explicit anonymous warns", runsapi.Options{Runs: &fakeRuns{}, Registry: reg, AuthLevel: funchost.AuthAnonymous}, false, true},
		{"default decided later is quiet", runsapi.Options{Runs: &fakeRuns{}, Registry: reg}, false, false},
		{"function is quiet", runsapi.Options{Runs: &fakeRuns{}, Registry: reg, AuthLevel: funchost.AuthFunction}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			tt.opts.Logger = newTextLogger(&logs)
			_, err := runsapi.NewService(tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr && !errors.Is(err, runsapi.ErrInvalidServiceOptions) {
				t.Fatalf("err = %v, want ErrInvalidServiceOptions", err)
			}
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "publicly accessible without authentication")
			if warned != tt.wantLog {
				t.Fatalf("warned = %v, want %v (logs %q)", warned, tt.wantLog, logs.String())
			}
		})
	}
}
