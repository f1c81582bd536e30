// Package runsapitest calls the runs HTTP API (package runsapi) in tests, through the
// transports of package funchosttest: one request and its answer, starting a run and polling its
// status, the exact bodies the contract prescribes for the example graphs, and scenarios
// every app that serves the API must pass (CheckScopedListings). The tests of runsapi and of
// the apps that mount it share it.
package runsapitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// Response is one HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Call sends one request through a transport. headers are name/value pairs.
func Call(t *testing.T, tr funchosttest.Transport, method, path, body string, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: string(data)}
}

// Expect checks the status and, when wantBody is not empty, the exact body and JSON type.
func (r Response) Expect(t *testing.T, what string, wantStatus int, wantBody string) {
	t.Helper()
	if r.Status != wantStatus {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.Status, wantStatus, r.Body)
	}
	if wantBody == "" {
		return
	}
	if r.Body != wantBody {
		t.Fatalf("%s: body\n got %s\nwant %s", what, r.Body, wantBody)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// Field decodes one top-level member of a JSON body.
func (r Response) Field(t *testing.T, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("decode body %s: %v", r.Body, err)
	}
	return m[key]
}

// StatusView is a decoded status body.
type StatusView struct {
	RuntimeStatus string          `json:"runtime_status"`
	CustomStatus  json.RawMessage `json:"custom_status"`
	Output        json.RawMessage `json:"output"`
}

// WaitingFor returns the event the run waits for, or "".
func (s StatusView) WaitingFor() string {
	var cs struct {
		Waiting string `json:"waiting_for_event"`
	}
	_ = json.Unmarshal(s.CustomStatus, &cs)
	return cs.Waiting
}

// Poll GETs the run's status every 10 ms until done reports true (at most 15 s) and returns
// the last response.
func Poll(t *testing.T, tr funchosttest.Transport, id string, done func(StatusView) bool) Response {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := Call(t, tr, "GET", "/api/runs/"+id, "")
		if res.Status != 200 {
			t.Fatalf("GET status of %s: %d %s", id, res.Status, res.Body)
		}
		var v StatusView
		if err := json.Unmarshal([]byte(res.Body), &v); err != nil {
			t.Fatalf("decode status %s: %v", res.Body, err)
		}
		if done(v) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not get there in time; last status %s", id, res.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Finished reports a run that completed, failed or was terminated.
func Finished(v StatusView) bool {
	return v.RuntimeStatus == "Completed" || v.RuntimeStatus == "Failed" || v.RuntimeStatus == "Terminated"
}

// Waiting reports a running run that waits for an event.
func Waiting(v StatusView) bool { return v.RuntimeStatus == "Running" && v.WaitingFor() != "" }

// Start posts a start request with an explicit instance id and checks the 202.
func Start(t *testing.T, tr funchosttest.Transport, graph, id, input string) {
	t.Helper()
	body := fmt.Sprintf(`{"instance_id": %q, "input": %s}`, id, input)
	res := Call(t, tr, "POST", "/api/graphs/"+graph+"/runs", body)
	want := fmt.Sprintf(`{"id": "%[2]s", "statusQueryGetUri": "%[1]s/api/runs/%[2]s", "sendEventPostUri": "%[1]s/api/runs/%[2]s/events/{eventName}", "terminatePostUri": "%[1]s/api/runs/%[2]s/cancel"}`, tr.BaseURL, id)
	res.Expect(t, "start "+graph, 202, want)
	if res.Header.Get("Location") != tr.BaseURL+"/api/runs/"+id || res.Header.Get("Retry-After") != "10" {
		t.Fatalf("start headers: Location %q Retry-After %q", res.Header.Get("Location"), res.Header.Get("Retry-After"))
	}
}

// UniqueID names a run per transport and case, so both transports share nothing.
func UniqueID(tr funchosttest.Transport, name string) string {
	return tr.Name + "-" + strings.ReplaceAll(name, " ", "-")
}

// Registry registers the graphs that build returns (examples.All, say) in a new registry.
func Registry(t *testing.T, build func() ([]durable.Graph, error)) *durable.Registry {
	t.Helper()
	graphs, err := build()
	if err != nil {
		t.Fatalf("build graphs: %v", err)
	}
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			t.Fatalf("register: %v", err)
		}
	}
	return reg
}

// AuthLevels returns the authLevel of every run function's function.json in app, by
// function name.
func AuthLevels(t *testing.T, app *funchost.FunctionApp) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{runsapi.FuncStartGraphRun, runsapi.FuncCancelRun, runsapi.FuncSendRunEvent, runsapi.FuncGetRunStatus,
		runsapi.FuncListRuns, runsapi.FuncGetRunHistory, runsapi.FuncGetRunFeed, runsapi.FuncPurgeRun} {
		fj, ok := app.FunctionJSONs()[name]
		if !ok {
			t.Fatalf("no function.json for %s", name)
		}
		out[name] = fj.Bindings[0].AuthLevel
	}
	return out
}
