package runsapi_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// sharedStorage is one set of memory stores that successive engines (deploys) share.
type sharedStorage struct {
	store    *memory.Store
	queue    *memory.Queue
	payloads *memory.PayloadStore
}

// deploy serves the runs API over a started engine on st with the given graphs registered.
func (st sharedStorage) deploy(t *testing.T, gs ...durable.Graph) (*engine.Engine, []funchosttest.Transport) {
	t.Helper()
	reg := durable.NewRegistry()
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	return serveRuns(t, engine.Options{Registry: reg, Store: st.store, Queue: st.queue, Payloads: st.payloads, PollInterval: 5 * time.Millisecond})
}

// TestService_GraphVersions_OperatorSeesWhenAnOldVersionCanGo: after a redeploy with v1 kept
// (durable.Previous) next to v2, GET /api/graphs/{name}/versions counts the unfinished runs
// of each version, GET /api/runs?graph_hash= lists them, and a version whose runs finished
// shows 0; on a process without v1 the v1 runs stay listed as unregistered, an event for one
// is refused there (503: nothing there can check it), and a run woken elsewhere is parked:
// its status says which version it waits for, and it is not failed.
func TestService_GraphVersions_OperatorSeesWhenAnOldVersionCanGo(t *testing.T) {
	st := sharedStorage{memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()}
	v1, v2 := enginetest.ApprovalGraph(t, "1"), enginetest.ApprovalGraph(t, "2")
	h1, h2 := v1.Manifest().GraphHash, v2.Manifest().GraphHash
	old, trs := st.deploy(t, v1)
	tr := trs[0]
	for i := range 3 {
		runsapitest.Start(t, tr, "approvals", fmt.Sprintf("old-%d", i), `{}`)
		runsapitest.Poll(t, tr, fmt.Sprintf("old-%d", i), runsapitest.Waiting)
	}
	_ = old.Close()

	both, trs := st.deploy(t, v2, durable.Previous(v1))
	for _, tr := range trs {
		runsapitest.Start(t, tr, "approvals", "new-"+tr.Name, `{"approved": true}`)
		res := runsapitest.Poll(t, tr, "new-"+tr.Name, runsapitest.Finished)
		if got := string(res.Field(t, "output")); !jsonHas(t, got, "graph_version", "2") {
			t.Fatalf("new run: output %s, want it on v2", got)
		}
	}
	tr = trs[0]
	want := fmt.Sprintf(`{"graph_name": "approvals", "versions": [`+
		`{"graph_hash": "%s", "graph_version": "2", "registered": true, "latest": true, "unfinished_runs": 0}, `+
		`{"graph_hash": "%s", "graph_version": "1", "registered": true, "latest": false, "unfinished_runs": 3}]}`, h2, h1)
	for _, tr := range trs {
		// A finished run leaves the active index just after its finishing commit, which its
		// status shows first: the count follows within moments.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			got := runsapitest.Call(t, tr, "GET", "/api/graphs/approvals/versions", "")
			if got.Body == want || time.Now().After(deadline) {
				got.Expect(t, "versions", 200, want)
				break
			}
		}
	}
	if ids := listed(t, tr, "graph_name=approvals&graph_hash="+h1+"&status=Running"); len(ids) != 3 {
		t.Fatalf("v1 runs listed: %v, want 3", ids)
	}
	runsapitest.Call(t, tr, "GET", "/api/runs?graph_hash=ABC", "").
		Expect(t, "bad hash", 400, `{"error": "invalid query parameter 'graph_hash': want 16 lowercase hexadecimal digits"}`)
	runsapitest.Call(t, tr, "GET", "/api/graphs/nope/versions", "").Expect(t, "unknown graph", 404, `{"error": "unknown graph 'nope'"}`)

	// One v1 run finishes on v1.
	runsapitest.Call(t, tr, "POST", "/api/runs/old-0/events/go", `{}`).Expect(t, "event", 202, "")
	res := runsapitest.Poll(t, tr, "old-0", runsapitest.Finished)
	if got := string(res.Field(t, "output")); !jsonHas(t, got, "result", "v1") {
		t.Fatalf("old run: output %s, want it finished on v1", got)
	}

	// A process without v1: the v1 runs are still counted, and an event parks its run.
	_ = both.Close()
	_, trs = st.deploy(t, v2)
	tr = trs[0]
	want = fmt.Sprintf(`{"graph_name": "approvals", "versions": [`+
		`{"graph_hash": "%s", "graph_version": "2", "registered": true, "latest": true, "unfinished_runs": 0}, `+
		`{"graph_hash": "%s", "graph_version": "1", "registered": false, "latest": false, "unfinished_runs": 2}]}`, h2, h1)
	runsapitest.Call(t, tr, "GET", "/api/graphs/approvals/versions", "").Expect(t, "versions without v1", 200, want)
	// Nothing here can check an event for a v1 run: 503 with Retry-After, nothing stored.
	refused := runsapitest.Call(t, tr, "POST", "/api/runs/old-1/events/go", `{}`)
	refused.Expect(t, "event where v1 is gone", 503, fmt.Sprintf(`{"error": "graph 'approvals' version '1' (graph_hash '%s') is not registered on this instance, which cannot check the event: retry later"}`, h1))
	if refused.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	// Sent where v1 still is, it wakes the run, which this process parks.
	if err := both.RaiseEvent(t.Context(), "old-1", "go", nil); err != nil {
		t.Fatal(err)
	}
	res = runsapitest.Poll(t, tr, "old-1", func(v runsapitest.StatusView) bool {
		return jsonHas(t, string(v.CustomStatus), "waiting_for_version", h1)
	})
	var status struct {
		RuntimeStatus string         `json:"runtime_status"`
		CustomStatus  map[string]any `json:"custom_status"`
	}
	if err := json.Unmarshal([]byte(res.Body), &status); err != nil {
		t.Fatal(err)
	}
	if status.RuntimeStatus != "Running" || status.CustomStatus["message"] != engine.VersionUnavailableMessage("approvals", "1", h1) {
		t.Fatalf("parked run: %s", res.Body)
	}
}

// listed returns the instance ids GET /api/runs?<query> lists on its first page.
func listed(t *testing.T, tr funchosttest.Transport, query string) []string {
	t.Helper()
	res := runsapitest.Call(t, tr, "GET", "/api/runs?"+query, "")
	var body struct {
		Runs []struct {
			ID string `json:"instance_id"`
		} `json:"runs"`
	}
	if res.Status != 200 || json.Unmarshal([]byte(res.Body), &body) != nil {
		t.Fatalf("list %s: %d %s", query, res.Status, res.Body)
	}
	ids := make([]string, len(body.Runs))
	for i, r := range body.Runs {
		ids[i] = r.ID
	}
	return ids
}

// jsonHas reports whether the JSON object doc has key with the string value want, at the top
// level or in its "state".
func jsonHas(t *testing.T, doc, key, want string) bool {
	t.Helper()
	var m map[string]any
	if json.Unmarshal([]byte(doc), &m) != nil {
		return false
	}
	if m[key] == want {
		return true
	}
	st, _ := m["state"].(map[string]any)
	return st[key] == want
}
