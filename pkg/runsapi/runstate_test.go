package runsapi_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestService_RunState_WaitingForApproval_BothTransports: the state of a run waiting for its
// approval is its state after the classification, where it stands the event it waits for;
// once approved, the final state with nowhere to stand. An unknown or impossible id is a 404.
func TestService_RunState_WaitingForApproval_BothTransports(t *testing.T) {
	_, trs := serveRunsWith(t, engine.Options{Registry: runsapitest.Registry(t, examples.All), Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()},
		runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "state")
			runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "I want a refund"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Waiting)
			r := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/state", "")
			want := `{"instance_id": "` + id + `", "graph_name": "support_agent", "runtime_status": "Running", "state": {"user_message": "I want a refund", "needs_human": true, ` +
				`"approved": null, "reviewer": null, "draft_response": null, "final_response": null, "tags": ["refund"]}, "step": 1, "generation": 0, ` +
				`"at": {"nodes": [], "waiting_for": ["approval"]}}`
			r.Expect(t, "state while waiting", 200, want)
			runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true, "reviewer": "ana"}`).Expect(t, "approve", 202, "")
			runsapitest.Poll(t, tr, id, runsapitest.Finished)
			var done struct {
				RuntimeStatus string          `json:"runtime_status"`
				State         json.RawMessage `json:"state"`
				At            struct {
					Nodes      []string `json:"nodes"`
					WaitingFor []string `json:"waiting_for"`
				} `json:"at"`
			}
			r = runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/state", "")
			if err := json.Unmarshal([]byte(r.Body), &done); err != nil || r.Status != 200 || done.RuntimeStatus != "Completed" ||
				!strings.Contains(string(done.State), `"reviewer": "ana"`) || done.At.Nodes == nil || len(done.At.Nodes) != 0 || len(done.At.WaitingFor) != 0 {
				t.Fatalf("state once finished: %d %s", r.Status, r.Body)
			}
			notFound := `{"error": "instance not found"}`
			runsapitest.Call(t, tr, "GET", "/api/runs/nope/state", "").Expect(t, "unknown run", 404, notFound)
			runsapitest.Call(t, tr, "GET", "/api/runs/..%20/state", "").Expect(t, "impossible id", 404, notFound)
		})
	}
}

// TestIsolation_RunState_AnotherCallersRunIsUnknown_BothTransports: under isolation the state
// of another identity's run answers as a run that does not exist; the owner and the master
// key read it.
func TestIsolation_RunState_AnotherCallersRunIsUnknown_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			id := runsapitest.UniqueID(tr, "iso-state")
			as(t, tr, "alice", key, "POST", "/api/graphs/support_agent/runs", `{"instance_id":"`+id+`","input":{"user_message":"refund"}}`).Expect(t, "alice start", 202, "")
			as(t, tr, "bob", key, "GET", "/api/runs/"+id+"/state", "").Expect(t, "bob", 404, `{"error": "instance not found"}`)
			as(t, tr, "alice", key, "GET", "/api/runs/"+id+"/state", "").Expect(t, "alice", 200, "")
			as(t, tr, "", tr.MasterKey, "GET", "/api/runs/"+id+"/state", "").Expect(t, "master key", 200, "")
		})
	}
}

// TestService_SearchKeys_StartAndList_BothTransports: runs started with a search key in the
// body are listed by key.<name>, with the other filters and paging; bad keys are 400s that
// store nothing.
func TestService_SearchKeys_StartAndList_BothTransports(t *testing.T) {
	_, trs := serveRunsWith(t, engine.Options{Registry: runsapitest.Registry(t, examples.All), Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()},
		runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			ticket := runsapitest.UniqueID(tr, "T-42")
			start := func(id, graph, input, keys string) {
				t.Helper()
				runsapitest.Call(t, tr, "POST", "/api/graphs/"+graph+"/runs", `{"instance_id":"`+id+`","input":`+input+`,"search_keys":`+keys+`}`).Expect(t, "start "+id, 202, "")
			}
			a, b, c := ticket+"-a", ticket+"-b", ticket+"-c"
			start(a, "support_agent", `{"user_message":"refund"}`, `{"ticket":"`+ticket+`","customer":"`+ticket+`-acme"}`)
			start(ticket+"-other", "support_agent", `{"user_message":"refund"}`, `{"ticket":"`+ticket+`-x"}`)
			start(b, "data_pipeline", `{"source_url":"u"}`, `{"ticket":"`+ticket+`"}`)
			start(c, "support_agent", `{"user_message":"refund"}`, `{"ticket":"`+ticket+`"}`)
			runsapitest.Poll(t, tr, b, runsapitest.Finished)
			if got := string(runsapitest.Call(t, tr, "GET", "/api/runs/"+a, "").Field(t, "search_keys")); got != `{"customer": "`+ticket+`-acme", "ticket": "`+ticket+`"}` {
				t.Errorf("status of %s: search_keys %s", a, got)
			}
			list := func(query string) []string {
				t.Helper()
				var ids []string
				token := ""
				for range 10 {
					q := query
					if token != "" {
						q += "&continuation_token=" + url.QueryEscape(token)
					}
					r := runsapitest.Call(t, tr, "GET", "/api/runs?"+q, "")
					ids = append(ids, listedIDs(t, r)...)
					var page struct {
						Token *string `json:"continuation_token"`
					}
					_ = json.Unmarshal([]byte(r.Body), &page)
					if page.Token == nil {
						return ids
					}
					token = *page.Token
				}
				t.Fatalf("%s: too many pages", query)
				return nil
			}
			k := "key.ticket=" + url.QueryEscape(ticket)
			for _, tt := range []struct {
				query string
				want  []string
			}{
				{k, []string{c, b, a}},
				{k + "&limit=1", []string{c, b, a}},
				{k + "&graph_name=support_agent", []string{c, a}},
				{k + "&status=Completed", []string{b}},
				{k + "&key.customer=" + url.QueryEscape(ticket+"-acme"), []string{a}},
				{"key.customer=" + url.QueryEscape(ticket+"-acme") + "&key.ticket=", []string{a}},
			} {
				if got := list(tt.query); !slices.Equal(got, tt.want) {
					t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
				}
			}
			for _, tt := range []struct{ body, want string }{
				{`{"search_keys": ["x"]}`, `{"error": "invalid search_keys: want an object of key names to strings"}`},
				{`{"search_keys": {"ticket": true}}`, `{"error": "invalid search key 'ticket': want a string or a number"}`},
				{`{"search_keys": {"a b": "x"}}`, `{"error": "invalid search key 'a b': want a name of 1 to 64 letters, digits, '_', '-' or '.'"}`},
				{`{"search_keys": {"ticket": ""}}`, `{"error": "invalid search key 'ticket': want a value of 1 to 256 bytes of UTF-8 without control characters"}`},
				{`{"search_keys": {"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1"}}`, `{"error": "invalid search_keys: want at most 8 keys, declared and given together"}`},
			} {
				runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id":"`+ticket+`-bad","input":{"source_url":"u"},`+tt.body[1:]).Expect(t, tt.body, 400, tt.want)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs/"+ticket+"-bad", "").Expect(t, "a refused start stored nothing", 404, "")
			for _, tt := range []struct{ query, want string }{
				{"key.a%20b=x", `{"error": "invalid query parameter 'key.a b': want a name of 1 to 64 letters, digits, '_', '-' or '.'"}`},
				{"key.t=x&key.t=y", `{"error": "invalid query parameter 'key.t': want one value"}`},
				{"key.t=%01", `{"error": "invalid query parameter 'key.t': want a value of 1 to 256 bytes of UTF-8 without control characters"}`},
			} {
				runsapitest.Call(t, tr, "GET", "/api/runs?"+tt.query, "").Expect(t, tt.query, 400, tt.want)
			}
		})
	}
}

// TestIsolation_SearchKeys_ListsTheCallersRunsOnly_BothTransports: under isolation a listing by
// key holds the caller's runs with that key only, never another identity's with the same key.
func TestIsolation_SearchKeys_ListsTheCallersRunsOnly_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			id := runsapitest.UniqueID(tr, "iso-key")
			body := func(who string) string {
				return `{"instance_id":"` + id + `-` + who + `","input":{"source_url":"u"},"search_keys":{"ticket":"` + id + `"}}`
			}
			as(t, tr, "alice", key, "POST", "/api/graphs/data_pipeline/runs", body("alice")).Expect(t, "alice start", 202, "")
			as(t, tr, "bob", key, "POST", "/api/graphs/data_pipeline/runs", body("bob")).Expect(t, "bob start", 202, "")
			q := "/api/runs?key.ticket=" + url.QueryEscape(id)
			if got := listedIDs(t, as(t, tr, "alice", key, "GET", q, "")); !slices.Equal(got, []string{id + "-alice"}) {
				t.Errorf("alice lists %v", got)
			}
			if got := listedIDs(t, as(t, tr, "", tr.MasterKey, "GET", q, "")); !slices.Equal(got, []string{id + "-bob", id + "-alice"}) {
				t.Errorf("the master key lists %v", got)
			}
		})
	}
}
