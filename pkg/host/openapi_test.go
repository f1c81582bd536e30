package host

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func TestOpenAPI_Document_ListsRoutesModelsAndExtensions(t *testing.T) {
	app := testApp(t, Options{Title: "demo", Version: "1.2.3"}, nil, nil)
	if err := app.Register(&fakeGraph{}, "chat", RegisterOptions{Description: "Chat", RequestModel: chatMessage{},
		ResponseModel: reflect.TypeFor[chatMessage](), AuthLevel: funchost.AuthAnonymous}); err != nil {
		t.Fatal(err)
	}
	app.AddOpenAPI(func(doc *openapi.Document) {
		doc.AddSchema("RegisteredGraphs", map[string]any{"type": "array"})
	})
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		if got := call(t, tr, "GET", "/api/openapi.json", "", ""); got.status != 401 {
			t.Fatalf("%s: without key %d, want 401 (app level)", tr.Name, got.status)
		}
		got := call(t, tr, "GET", "/api/openapi.json", "", tr.FunctionKey)
		if got.status != 200 || !isJSONType(got.header.Get("Content-Type")) {
			t.Fatalf("%s: %d %q", tr.Name, got.status, got.header.Get("Content-Type"))
		}
		if !strings.HasPrefix(got.body, `{"openapi": "3.0.3", "info": {"title": "demo", "version": "1.2.3"}, "paths": {`) {
			t.Fatalf("%s: document starts %.120s", tr.Name, got.body)
		}
		var doc struct {
			Paths      map[string]map[string]openapi.Operation
			Components struct{ Schemas map[string]json.RawMessage }
		}
		if err := json.Unmarshal([]byte(got.body), &doc); err != nil {
			t.Fatal(err)
		}
		wantOps := map[string]string{
			"/api/health":                                "get fg_health",
			"/api/health/details":                        "get fg_health_details",
			"/api/graphs/chat/invoke":                    "post fg_chat_invoke",
			"/api/graphs/chat/stream":                    "post fg_chat_stream",
			"/api/graphs/chat/threads/{thread_id}/state": "get fg_chat_state",
		}
		if len(doc.Paths) != len(wantOps) {
			t.Fatalf("paths = %v", doc.Paths)
		}
		for path, want := range wantOps {
			method, id, _ := strings.Cut(want, " ")
			if op, ok := doc.Paths[path][method]; !ok || op.OperationID != id {
				t.Fatalf("%s %s = %+v, want %s", method, path, doc.Paths[path], id)
			}
		}
		state := doc.Paths["/api/graphs/chat/threads/{thread_id}/state"]["get"]
		if len(state.Parameters) != 1 || state.Parameters[0].Name != "thread_id" || state.Parameters[0].In != "path" {
			t.Fatalf("state parameters = %+v", state.Parameters)
		}
		inv, _ := json.Marshal(doc.Paths["/api/graphs/chat/invoke"]["post"].RequestBody)
		if !strings.Contains(string(inv), `"input":{"properties":{"content":{"type":"string"},"role":{"type":"string"}}`) {
			t.Fatalf("invoke request schema lacks the request model: %s", inv)
		}
		if !strings.Contains(got.body, `"text/event-stream"`) {
			t.Fatal("stream response is not an event stream")
		}
		for _, name := range []string{"InvokeRequest", "StreamRequest", "InvokeResponse", "ErrorResponse", "GraphInfo", "HealthDetailsResponse", "RegisteredGraphs"} {
			if _, ok := doc.Components.Schemas[name]; !ok {
				t.Fatalf("schema %s missing", name)
			}
		}
	}
}
