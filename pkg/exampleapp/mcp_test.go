package exampleapp

import (
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// keyed adds the function key to every request.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-functions-key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCP_ToolsAreTheDurableAndHostedGraphs: POST /api/mcp lists the example durable graphs
// and the hosted echo_agent as tools and runs one of each to completion through the SDK's
// client, behind both transports; without a key
// the host refuses the request.
func TestMCP_ToolsAreTheDurableAndHostedGraphs(t *testing.T) {
	app, err := Build(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	for _, tr := range funchosttest.Transports(t, app.FunctionApp) {
		t.Run(tr.Name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			if _, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: tr.BaseURL + "/api/mcp"}, nil); err == nil {
				t.Fatal("connected without a key")
			}
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
				Endpoint: tr.BaseURL + "/api/mcp", HTTPClient: &http.Client{Transport: keyed{key: tr.FunctionKey}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			want := []string{"assistant", "content_classifier", "data_pipeline", "echo_agent", "reply_writer", "research_agent", "support_agent"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v", names, want)
			}
			out, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{"user_message": "hello"}})
			if err != nil {
				t.Fatal(err)
			}
			if m, _ := out.StructuredContent.(map[string]any); out.IsError || m["final_node"] != "finalize_reply" {
				t.Fatalf("call = %+v", out)
			}
			// The hosted graph runs within the call, on a thread its result names.
			out, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo_agent",
				Arguments: map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if m, _ := out.StructuredContent.(map[string]any); out.IsError || out.Meta[mcpserver.ThreadMetaKey] == nil || m["messages"] == nil {
				t.Fatalf("hosted call = %+v", out)
			}
		})
	}
}
