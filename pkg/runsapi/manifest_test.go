package runsapi_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestService_GraphManifest_NodesEventsAndSchemas: GET /api/graphs lists the public graphs;
// GET /api/graphs/{g}/manifest returns the manifest and a typed event's payload schema (with
// the durable required rule), and answers 404 for unknown graphs, versions and internal graphs.
func TestService_GraphManifest_NodesEventsAndSchemas(t *testing.T) {
	reg := internalRegistry(t)
	if err := reg.Register(expenseApprovals(t)); err != nil {
		t.Fatal(err)
	}
	_, trs := serveRuns(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	support, _ := reg.Latest("support_agent")
	hash := support.Manifest().GraphHash
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			list := runsapitest.Call(t, tr, "GET", "/api/graphs", "")
			if list.Status != 200 || !strings.Contains(list.Body, `"graph_name": "support_agent"`) || strings.Contains(list.Body, "fg_internal") {
				t.Fatalf("list: %d %s", list.Status, list.Body)
			}
			m := runsapitest.Call(t, tr, "GET", "/api/graphs/support_agent/manifest", "")
			for _, want := range []string{
				`"graph_name": "support_agent", "latest": true, "manifest": {"graph_name": "support_agent"`,
				`"graph_hash": "` + hash + `"`,
				`"classify_request": {"name": "classify_request", "handler_name": "examples.support_agent.graph.classify_request", "next_node": null, "route_handler_name": "examples.support_agent.graph.route_after_classify", "terminal": false}`,
				`"finalize_reply": {"name": "finalize_reply", "handler_name": "examples.support_agent.graph.finalize_reply", "next_node": null, "route_handler_name": null, "terminal": true}`,
				`"events": [{"event_name": "approval", "typed": false, "payload_schema": null}]`,
			} {
				if m.Status != 200 || !strings.Contains(m.Body, want) {
					t.Fatalf("manifest lacks %s: %d %s", want, m.Status, m.Body)
				}
			}
			byHash := runsapitest.Call(t, tr, "GET", "/api/graphs/support_agent/manifest?graph_hash="+hash, "")
			if byHash.Body != m.Body {
				t.Errorf("by hash: %s, want %s", byHash.Body, m.Body)
			}
			typed := runsapitest.Call(t, tr, "GET", "/api/graphs/expense_approval/manifest", "")
			want := `"events": [{"event_name": "approval", "typed": true, "payload_schema": {"type": "object", "properties": {"approved": {"type": "boolean"}, "reviewer": {"type": "string"}}, "required": ["approved"]}}]`
			if !strings.Contains(typed.Body, want) {
				t.Errorf("typed event: %s, want %s", typed.Body, want)
			}
			for _, tt := range []struct {
				path   string
				status int
				body   string
			}{
				{"/api/graphs/nope/manifest", 404, `{"error": "unknown graph 'nope'"}`},
				{"/api/graphs/fg_internal/manifest", 404, `{"error": "unknown graph 'fg_internal'"}`},
				{"/api/graphs/support_agent/manifest?graph_hash=0123456789abcdef", 404, `{"error": "unknown version '0123456789abcdef' of graph 'support_agent'"}`},
				{"/api/graphs/support_agent/manifest?graph_hash=XYZ", 400, `{"error": "invalid query parameter 'graph_hash': want 16 lowercase hexadecimal digits"}`},
			} {
				runsapitest.Call(t, tr, "GET", tt.path, "").Expect(t, tt.path, tt.status, tt.body)
			}
		})
	}
}
