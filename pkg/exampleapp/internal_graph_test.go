package exampleapp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/platformruns"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// The platform's background runs are runs of the internal durable graph fg_platform_run: the
// platform routes serve them, the generic runs API answers 404 as for a graph or run that does
// not exist, lists none of them, and health details and openapi.json do not name the graph.
func TestExampleApp_InternalGraph_UnreachableThroughRunsAPI(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			call := func(method, path, body string) runsapitest.Response {
				t.Helper()
				return runsapitest.Call(t, tr, method, path, body, "x-functions-key", tr.FunctionKey)
			}
			res := call("POST", "/api/threads", `{}`)
			res.Expect(t, "create thread", 200, "")
			var tid string
			_ = json.Unmarshal(res.Field(t, "thread_id"), &tid)
			res = call("POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"echo_agent","input":{"messages":[{"role":"user","content":"hi"}]}}`)
			res.Expect(t, "create background run", 200, "")
			var rid string
			_ = json.Unmarshal(res.Field(t, "run_id"), &rid)
			if rid == "" {
				t.Fatalf("create background run: no run_id in %s", res.Body)
			}
			if res := call("GET", "/api/threads/"+tid+"/runs/"+rid+"/join", ""); res.Status != 200 {
				t.Fatalf("join: %d %s", res.Status, res.Body)
			}
			if res := call("GET", "/api/threads/"+tid+"/runs/"+rid, ""); res.Status != 200 || !strings.Contains(res.Body, `"status": "success"`) {
				t.Fatalf("platform run after join: %d %s", res.Status, res.Body)
			}

			unknownGraph := `{"error": "unknown graph '` + platformruns.GraphName + `'"}`
			notFound := `{"error": "instance not found"}`
			call("POST", "/api/graphs/"+platformruns.GraphName+"/runs", `{"instance_id":"forged","input":{"thread_id":"`+tid+`","run_id":"forged","created_at":"2000-01-01T00:00:00.000000000Z","request":"{}"}}`).
				Expect(t, "start internal graph", 404, unknownGraph)
			call("POST", "/api/graphs/"+platformruns.GraphName+"/runs", `not json`).Expect(t, "start internal graph, bad body", 404, unknownGraph)
			call("GET", "/api/graphs/"+platformruns.GraphName+"/versions", "").Expect(t, "versions of the internal graph", 404, unknownGraph)
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/api/runs/" + rid, ""},
				{"POST", "/api/runs/" + rid + "/events/approval", `{"approved":true}`},
				{"POST", "/api/runs/" + rid + "/cancel", `{}`},
				{"GET", "/api/runs/" + rid + "/history", ""},
				{"DELETE", "/api/runs/" + rid, ""},
			} {
				call(c.method, c.path, c.body).Expect(t, c.method+" "+c.path, 404, notFound)
			}
			// A public run may not take (and so replace) a finished platform run's id.
			call("POST", "/api/graphs/support_agent/runs", `{"instance_id":"`+rid+`","input":{"user_message":"hi"}}`).
				Expect(t, "start with a platform run's id", 409, `{"error": "instance already exists", "instance_id": "`+rid+`"}`)

			if res := call("GET", "/api/runs?limit=1000", ""); res.Status != 200 || strings.Contains(res.Body, platformruns.GraphName) || strings.Contains(res.Body, rid) {
				t.Fatalf("list runs shows the platform run: %d %s", res.Status, res.Body)
			}
			call("GET", "/api/runs?graph_name="+platformruns.GraphName, "").Expect(t, "list internal graph", 200, `{"runs": [], "continuation_token": null}`)
			// (The platform's own route ids, fg_platform_runs_*, are not the graph.)
			for _, path := range []string{"/api/health/details", "/api/openapi.json"} {
				if res := call("GET", path, ""); res.Status != 200 || strings.Contains(res.Body, platformruns.GraphName+`"`) {
					t.Fatalf("%s names the internal graph: %d %.300s", path, res.Status, res.Body)
				}
			}
			// The platform routes still serve the run, untouched by the refused calls.
			if res := call("GET", "/api/threads/"+tid+"/runs/"+rid, ""); res.Status != 200 || !strings.Contains(res.Body, `"status": "success"`) {
				t.Fatalf("platform run after the refused calls: %d %s", res.Status, res.Body)
			}
			if res := call("GET", "/api/threads/"+tid+"/runs", ""); res.Status != 200 || !strings.Contains(res.Body, rid) {
				t.Fatalf("platform run list: %d %s", res.Status, res.Body)
			}
		})
	}
}
