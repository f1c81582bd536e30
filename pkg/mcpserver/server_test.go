package mcpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

func TestServer_ListTools_OneToolPerGraphWithStateSchema(t *testing.T) {
	r := newRig(t, mcpserver.Options{})
	for _, tr := range funchosttest.Transports(t, r.app) {
		t.Run(tr.Name, func(t *testing.T) {
			cs := connect(t, tr, tr.FunctionKey)
			if init := cs.InitializeResult(); init == nil || init.Capabilities.Extensions[mcpserver.ExtensionTasks] == nil {
				t.Fatalf("server capabilities = %+v, want the Tasks extension", init)
			}
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"data_pipeline", "support_agent"}) {
				t.Fatalf("tools = %v", names)
			}
			i := slices.IndexFunc(res.Tools, func(x *mcp.Tool) bool { return x.Name == "support_agent" })
			schema, _ := json.Marshal(res.Tools[i].InputSchema)
			var s struct {
				Type       string                     `json:"type"`
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(schema, &s); err != nil {
				t.Fatal(err)
			}
			if s.Type != "object" || !slices.Equal(s.Required, []string{"user_message"}) {
				t.Fatalf("input schema = %s", schema)
			}
			if got := string(s.Properties["approved"]); got != `{"type":["boolean","null"]}` {
				t.Fatalf("approved schema = %s", got)
			}
		})
	}
}

func TestServer_CallTool_CompletedRunAnswersOutput(t *testing.T) {
	r := newRig(t, mcpserver.Options{})
	for _, tr := range funchosttest.Transports(t, r.app) {
		t.Run(tr.Name, func(t *testing.T) {
			cs := connect(t, tr, tr.FunctionKey)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{"user_message": "hello there"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("tool error: %v", res.Content)
			}
			out, _ := json.Marshal(res.StructuredContent)
			var o struct {
				FinalNode string `json:"final_node"`
				State     struct {
					FinalResponse string `json:"final_response"`
				} `json:"state"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				t.Fatal(err)
			}
			if o.FinalNode != "finalize_reply" || o.State.FinalResponse == "" {
				t.Fatalf("structured content = %s", out)
			}
		})
	}
}

func TestServer_CallTool_WaitingRunNamesRunAndEvent(t *testing.T) {
	r := newRig(t, mcpserver.Options{})
	tr := funchosttest.Transports(t, r.app)[0]
	cs := connect(t, tr, tr.FunctionKey)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{"user_message": "I want a refund"}})
	if err != nil {
		t.Fatal(err)
	}
	m := runMeta(t, res)
	id, _ := m["instance_id"].(string)
	if m["state"] != "input_required" || m["runtime_status"] != "Running" || m["status_url"] != tr.BaseURL+"/api/runs/"+id {
		t.Fatalf("meta = %v", m)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"approval"`) || !strings.Contains(text, "/api/runs/"+id+"/events/approval") {
		t.Fatalf("text = %q", text)
	}
	run, err := r.eng.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := run.Progress(); p.WaitingForEvent != "approval" {
		t.Fatalf("run progress = %+v", p)
	}
}

func TestServer_CallTool_BadArgumentsAreToolErrors(t *testing.T) {
	r := newRig(t, mcpserver.Options{MaxInputDepth: 3})
	tr := funchosttest.Transports(t, r.app)[0]
	cs := connect(t, tr, tr.FunctionKey)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "invalid initial state: user_message") {
		b, _ := json.Marshal(res)
		t.Fatalf("result = %s", b)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{"user_message": "hi", "tags": []any{[]any{[]any{[]any{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "invalid initial state: the arguments exceed maximum nesting depth of 3" {
		b, _ := json.Marshal(res)
		t.Fatalf("deep result = %s", b)
	}
	list, err := r.eng.ListRuns(t.Context(), engineQuery())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 0 {
		t.Fatalf("runs stored: %d", len(list.Runs))
	}
}
