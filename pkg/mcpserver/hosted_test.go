package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/protocoltest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// sumIn and sumOut are the model of the hosted "sum" graph.
type sumIn struct {
	Numbers []float64 `json:"numbers"`
	Label   string    `json:"label,omitempty"`
}

type sumOut struct {
	Sum   float64 `json:"sum"`
	Label string  `json:"label"`
}

// hostedRig is the MCP endpoint over the durable rig's graphs and a hosting app with sum
// (function level), secret (admin level, never offered at function level) and echo_agent (a
// checkpointer: a thread per conversation); iso, when set, scopes both.
func hostedRig(t *testing.T, iso *isolation.Isolation) *funchost.FunctionApp {
	t.Helper()
	h, err := host.New(host.Options{AuthLevel: funchost.AuthFunction, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sum := host.Func[sumIn, sumOut](func(_ context.Context, in sumIn) (sumOut, error) {
		if len(in.Numbers) == 0 {
			return sumOut{}, errors.New("secret internal detail")
		}
		var s float64
		for _, n := range in.Numbers {
			s += n
		}
		return sumOut{Sum: s, Label: in.Label}, nil
	})
	if err := h.Register(sum, "sum", host.RegisterOptions{Description: "Add numbers", RequestModel: sumIn{}, ResponseModel: sumOut{}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Register(sum, "secret", host.RegisterOptions{AuthLevel: funchost.AuthAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := h.Register(echoagent.New(echoagent.Options{}), echoagent.Name, host.RegisterOptions{RequestModel: echoagent.State{}}); err != nil {
		t.Fatal(err)
	}
	if iso != nil {
		h.SetIsolation(iso, &protocoltest.Owners{})
	}
	r := newRig(t, mcpserver.Options{Hosted: h, Isolation: iso})
	return r.app
}

func TestServer_HostedGraphs_AreToolsRunWithinTheCall(t *testing.T) {
	app := hostedRig(t, nil)
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			cs := connect(t, tr, tr.FunctionKey)
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var sumTool *mcp.Tool
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.Name == "sum" {
					sumTool = tool
				}
			}
			slices.Sort(names)
			if want := []string{"data_pipeline", echoagent.Name, "sum", "support_agent"}; !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v (secret needs the admin level)", names, want)
			}
			schema, _ := json.Marshal(sumTool.InputSchema)
			if !strings.Contains(string(schema), `"numbers":{"items":{"format":"double","type":"number"},"type":"array"}`) ||
				strings.Contains(string(schema), `"required"`) || !strings.HasPrefix(sumTool.Description, "Add numbers.") {
				t.Fatalf("sum tool = %q %s", sumTool.Description, schema)
			}

			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"numbers": []float64{1, 2, 3.5}, "label": "total"}})
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(res.StructuredContent)
			if res.IsError || string(out) != `{"label":"total","sum":6.5}` {
				t.Fatalf("sum: error %v, structured %s, content %v", res.IsError, out, res.Content)
			}

			// A graph's error is the route's public answer, never its text.
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"numbers": []float64{}}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.Contains(text, "Graph execution failed") || strings.Contains(text, "secret") {
				t.Fatalf("failing graph: error %v, %q", res.IsError, text)
			}
			// Input the route refuses is a tool error with the route's message.
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"numbers": "three"}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "status 4") {
				t.Fatalf("bad input: error %v, %q", res.IsError, text)
			}
		})
	}
}

func TestServer_HostedGraphWithCheckpointer_ContinuesTheThreadItsResultNames(t *testing.T) {
	app := hostedRig(t, nil)
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			cs := connect(t, tr, tr.FunctionKey)
			say := func(text string, meta mcp.Meta) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echoagent.Name, Meta: meta,
					Arguments: map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("%s: %v", text, res.Content[0].(*mcp.TextContent).Text)
				}
				return res
			}
			first := say("hello", nil)
			tid, _ := first.Meta[mcpserver.ThreadMetaKey].(string)
			if tid == "" {
				t.Fatalf("first turn names no thread: %+v", first.Meta)
			}
			second := say("again", mcp.Meta{mcpserver.ThreadMetaKey: tid})
			var st echoagent.State
			b, _ := json.Marshal(second.StructuredContent)
			if err := json.Unmarshal(b, &st); err != nil || len(st.Messages) != 4 || second.Meta[mcpserver.ThreadMetaKey] != tid {
				t.Fatalf("second turn on %s: %s (%v), want the thread's 4 messages", tid, b, second.Meta)
			}
			fresh := say("hello", nil)
			if fresh.Meta[mcpserver.ThreadMetaKey] == tid {
				t.Fatal("a call without a thread continued another's")
			}
		})
	}
}

func TestServer_HostedThreads_AreTheirCallersOwn(t *testing.T) {
	app := hostedRig(t, newIsolation(t))
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			header := "X-Test-User" // the standalone server's identity; the host's is its principal
			if tr.Name == funchosttest.TransportEmulatedHost {
				header = isolation.PrincipalIDHeader
			}
			call := func(user string, meta mcp.Meta) *mcp.CallToolResult {
				t.Helper()
				cs := connect(t, tr, tr.FunctionKey, header, user)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echoagent.Name, Meta: meta,
					Arguments: map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi " + user}}}})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			mine := call("alice", nil)
			tid, _ := mine.Meta[mcpserver.ThreadMetaKey].(string)
			if mine.IsError || tid == "" {
				t.Fatalf("alice's turn: %v %+v", mine.IsError, mine.Content)
			}
			if again := call("alice", mcp.Meta{mcpserver.ThreadMetaKey: tid}); again.IsError {
				t.Fatalf("alice continuing her thread: %v", again.Content[0].(*mcp.TextContent).Text)
			}
			theirs := call("bob", mcp.Meta{mcpserver.ThreadMetaKey: tid})
			text := theirs.Content[0].(*mcp.TextContent).Text
			if !theirs.IsError || !strings.Contains(text, "status 404") || strings.Contains(text, "hi alice") {
				t.Fatalf("bob on alice's thread: error %v, %q, want not found", theirs.IsError, text)
			}
		})
	}
}
