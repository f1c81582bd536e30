package runsclient_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// The routes of rewind, state and search keys, against a fake answering their documented
// shapes.

const failedStatus = `{"instance_id": "r1", "runtime_status": "Running", "custom_status": {"graph_name": "triage", "graph_version": "1", "graph_hash": "af183f226f37e6fc", "current_node": "classify"}, "input": {"graph_name": "triage", "graph_hash": "af183f226f37e6fc", "initial_state": {}, "current_node": null, "metadata": {}}, "output": null}`

func TestClient_Rewind_PostsTheReasonAndReadsTheStatus(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		answer(202, failedStatus, "Location", "http://x/api/runs/r1"),
		answer(409, `{"error": "run 'r2' is Completed; only a Failed run can be rewound", "instance_id": "r2", "runtime_status": "Completed"}`),
		answer(202, failedStatus),
	}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	st, err := c.Rewind(t.Context(), "r1", "model endpoint is back")
	if err != nil || st.RuntimeStatus != runsclient.StatusRunning || st.Progress.CurrentNode != "classify" {
		t.Fatalf("rewind: %+v, %v", st, err)
	}
	_, err = c.Rewind(t.Context(), "r2", "")
	var apiErr *runsclient.Error
	if !errors.Is(err, runsclient.ErrConflict) || !errors.As(err, &apiErr) || apiErr.RuntimeStatus() != runsclient.StatusCompleted || apiErr.Message != "run 'r2' is Completed; only a Failed run can be rewound" {
		t.Fatalf("rewind of a Completed run: %v", err)
	}
	if _, err := c.Rewind(t.Context(), "r3", ""); err != nil {
		t.Fatal(err)
	}
	if r := f.requests[0]; r.Method != "POST" || r.URL.Path != "/api/runs/r1/rewind" || f.bodies[0] != `{"reason":"model endpoint is back"}` {
		t.Fatalf("request %s %s %s", r.Method, r.URL.Path, f.bodies[0])
	}
	if f.bodies[2] != "" {
		t.Fatalf("a rewind without a reason sent %q: want no body", f.bodies[2])
	}
}

func TestClient_RewindAll_FollowsTheTokens(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		answer(200, `{"rewound": ["a", "b"], "continuation_token": "t1"}`),
		answer(200, `{"rewound": ["c"]}`),
	}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	after := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	var ids []string
	for p, err := range c.RewindAll(t.Context(), runsclient.RewindFilter{GraphName: "triage", FailedAfter: after, FailedBefore: after.Add(time.Hour), Limit: 2, Reason: "outage"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.Rewound...)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) || f.count() != 2 {
		t.Fatalf("rewound %v in %d calls", ids, f.count())
	}
	want := []map[string]any{
		{"graph_name": "triage", "failed_after": "2026-03-04T05:00:00Z", "failed_before": "2026-03-04T06:00:00Z", "limit": float64(2), "reason": "outage"},
		{"graph_name": "triage", "failed_after": "2026-03-04T05:00:00Z", "failed_before": "2026-03-04T06:00:00Z", "limit": float64(2), "reason": "outage", "continuation_token": "t1"},
	}
	for i, r := range f.requests {
		var got map[string]any
		if err := json.Unmarshal([]byte(f.bodies[i]), &got); err != nil || r.Method != "POST" || r.URL.Path != "/api/runs/rewind" || !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("call %d: %s %s %s (%v), want %v", i, r.Method, r.URL.Path, f.bodies[i], err, want[i])
		}
	}
}

func TestClient_State_DecodesTheStateAndWhereTheRunStands(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(200, `{"instance_id": "r1", "graph_name": "support_agent", "runtime_status": "Running",
 "state": {"user_message": "refund", "needs_human": true}, "step": 2, "generation": 1,
 "at": {"nodes": [], "waiting_for": ["approval"], "sleeping_until": "2026-03-04T06:00:00Z", "branches": {"done": 1, "total": 3}, "retry_at": "2026-03-04T05:06:09Z"}}`)}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	type support struct {
		UserMessage string `json:"user_message"`
		NeedsHuman  bool   `json:"needs_human"`
	}
	s, st, err := runsclient.StateOf[support](t.Context(), c, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if s != (support{"refund", true}) || st.Step != 2 || st.Generation != 1 || !slices.Equal(st.At.WaitingFor, []string{"approval"}) ||
		st.At.Branches == nil || *st.At.Branches != (runsclient.Branches{Done: 1, Total: 3}) ||
		st.At.SleepingUntil == nil || !st.At.SleepingUntil.Equal(time.Date(2026, 3, 4, 6, 0, 0, 0, time.UTC)) || st.At.RetryAt == nil {
		t.Fatalf("state %+v, at %+v", s, st.At)
	}
	if r := f.requests[0]; r.Method != "GET" || r.URL.Path != "/api/runs/r1/state" {
		t.Fatalf("request %s %s", r.Method, r.URL.Path)
	}
}

func TestClient_SearchKeys_AtStartAndInTheListing(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		answer(202, `{"id": "r1", "statusQueryGetUri": "http://x/api/runs/r1", "sendEventPostUri": "http://x/api/runs/r1/events/{eventName}", "terminatePostUri": "http://x/api/runs/r1/cancel"}`),
		answer(200, `{"runs": [{"instance_id": "r1", "runtime_status": "Running", "graph_name": "triage", "graph_version": "1", "graph_hash": "af183f226f37e6fc", "created_at": "2026-03-04T05:00:00Z", "last_updated_at": "2026-03-04T05:00:01Z"}], "continuation_token": null}`),
	}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	_, err := c.StartRun(t.Context(), "triage", map[string]string{"ticket_id": "T-1"}, &runsclient.StartOptions{SearchKeys: map[string]string{"customer": "acme"}, Metadata: map[string]int{"v": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"input":{"ticket_id":"T-1"},"metadata":{"v":1},"search_keys":{"customer":"acme"}}`; f.bodies[0] != want {
		t.Fatalf("start body %s, want %s", f.bodies[0], want)
	}
	page, err := c.List(t.Context(), runsclient.ListOptions{GraphName: "triage", Status: runsclient.StatusRunning, Keys: map[string]string{"ticket_id": "T-1", "customer": "acme & co"}})
	if err != nil || len(page.Runs) != 1 || page.ContinuationToken != "" {
		t.Fatal(page, err)
	}
	q := f.requests[1].URL.Query()
	if q.Get("key.ticket_id") != "T-1" || q.Get("key.customer") != "acme & co" || q.Get("graph_name") != "triage" || q.Get("runtime_status") != "Running" || len(q) != 4 {
		t.Fatalf("listing query %v", q)
	}
}
