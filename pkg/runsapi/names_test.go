package runsapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestService_EventNames_PastTheLimit_Are400NothingStored: an event name is 1–256
// characters without control characters; a longer one or one with a control character is a
// 400 before anything is stored, and a name at the limit is accepted. (A name above a table
// property, which used to answer 500, cannot pass the host's URL limit; the engine refuses
// it too: TestEngine_RaiseEvent_NamePastTheLimit_RefusedBeforeStorage.)
func TestService_EventNames_PastTheLimit_Are400NothingStored(t *testing.T) {
	const badName = `{"error": "invalid event_name: want 1 to 256 characters without control characters"}`
	for _, tr := range serveEngine(t) {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "names")
			runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Waiting)
			history := func() int {
				res := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?limit=1000", "")
				var h struct {
					Events []json.RawMessage `json:"events"`
				}
				if err := json.Unmarshal([]byte(res.Body), &h); err != nil {
					t.Fatalf("history %s: %v", res.Body, err)
				}
				return len(h.Events)
			}
			before := history()
			for _, tt := range []struct {
				name, event string
			}{
				{"257 characters", strings.Repeat("e", 257)},
				{"3 000 characters (the host's URL limit is 4 096 bytes)", strings.Repeat("e", 3000)},
				{"control character", "appro\x01val"},
				{"DEL", "approval\x7f"},
				{"C1 control", "approval\u0085"},
			} {
				res := runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/"+url.PathEscape(tt.event), `{"approved": true}`)
				res.Expect(t, tt.name, 400, badName)
			}
			if after := history(); after != before {
				t.Fatalf("refused events stored rows: history %d → %d", before, after)
			}
			// 256 characters, some outside ASCII, is a valid name: the graph has no handler
			// for it, a 404 naming the event and the graph, nothing stored.
			ok := strings.Repeat("é", 128) + strings.Repeat("e", 128)
			res := runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/"+url.PathEscape(ok), `{}`)
			res.Expect(t, "256 characters", 404, "")
			if !strings.Contains(res.Body, "has no handler for event") {
				t.Fatalf("256 characters: body %s, want the no-handler message", res.Body)
			}
			if after := history(); after != before {
				t.Fatalf("refused event: history %d → %d", before, after)
			}
		})
	}
}

// TestService_ListRuns_GraphNameNoRunCanHave_Is400: the graph_name filter follows the graph
// name rule (1–256 characters without / \ # ? or control characters).
func TestService_ListRuns_GraphNameNoRunCanHave_Is400(t *testing.T) {
	const want = `{"error": "invalid query parameter 'graph_name': want 1 to 256 characters without / \\ # ? or control characters"}`
	for _, tr := range serveEngine(t) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, name := range []string{strings.Repeat("g", 257), "a#b", "a?b", "tab\there"} {
				runsapitest.Call(t, tr, "GET", "/api/runs?graph_name="+url.QueryEscape(name), "").Expect(t, name, 400, want)
			}
			runsapitest.Call(t, tr, "GET", "/api/runs?graph_name=support_agent", "").Expect(t, "valid name", 200, "")
		})
	}
}
