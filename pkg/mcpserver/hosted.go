package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/hostcall"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

// ThreadMetaKey is the _meta member of a tool call and of its result that names the thread
// of a hosted graph with a checkpointer: a call without it runs on a new thread, whose id
// the result names, and a call that sends it back continues that thread.
const ThreadMetaKey = "io.funcgraph/thread_id"

// hostedTool is one hosted graph offered as a tool: its invoke route, run in process.
type hostedTool struct {
	graph        string
	checkpointed bool
	fn           funchost.HTTPFunction
	def          *mcp.Tool
}

// hostedTools returns one tool per graph of app, in registration order, leaving out a graph
// named like one of taken (a durable tool keeps its name).
func hostedTools(app *host.GraphHostApp, taken []tool) []hostedTool {
	if app == nil {
		return nil
	}
	names := make(map[string]bool, len(taken))
	for _, t := range taken {
		names[t.graph] = true
	}
	var out []hostedTool
	for _, g := range app.Graphs() {
		fn, ok := app.InvokeFunction(g.Name)
		if !ok || names[g.Name] {
			continue
		}
		in := hostedInputSchema(fn.Doc.Request)
		desc := "Run hosted graph " + g.Name + " on these inputs and answer its output."
		if g.HasCheckpointer {
			desc += " It keeps a thread: send the result's _meta " + ThreadMetaKey + " back to continue it."
		}
		if g.Description != nil && *g.Description != "" {
			desc = *g.Description + ". " + desc
		}
		out = append(out, hostedTool{graph: g.Name, checkpointed: g.HasCheckpointer, fn: fn,
			def: &mcp.Tool{Name: g.Name, Description: desc, InputSchema: in}})
	}
	return out
}

// hostedInputSchema is the JSON Schema of a hosted tool's arguments: the input member of its
// invoke route's request schema (the graph's RequestModel), else any object. Nothing is
// required: the route validates no input against the model.
func hostedInputSchema(request any) map[string]any {
	var doc struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	in := map[string]any{}
	if b, err := json.Marshal(request); err == nil && json.Unmarshal(b, &doc) == nil && doc.Properties["input"] != nil {
		in = convert(doc.Properties["input"])
	}
	in["type"] = "object" // a call's arguments are always an object
	return in
}

// offered reports whether t may be offered at the endpoint's level: a graph whose route
// needs a higher level than the endpoint's is not, so an MCP key reaches no graph its own
// routes would refuse it.
func (s *Server) offered(t hostedTool) bool {
	return hostcall.LevelRank(t.fn.AuthLevel) <= hostcall.LevelRank(s.level)
}

// hostedHandler runs t's graph through its invoke route, with the request's caller, and
// answers the route's output as structured content or its error as a tool error.
func (s *Server) hostedHandler(t hostedTool, info requestInfo) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input := bytes.TrimSpace(req.Params.Arguments)
		if len(input) == 0 || string(input) == "null" {
			input = []byte("{}")
		}
		if jsonlimit.Check(input, s.opts.MaxInputDepth, 0) != nil {
			return toolError(fmt.Sprintf("invalid input: the arguments exceed maximum nesting depth of %d", s.opts.MaxInputDepth)), nil
		}
		tid := ""
		if t.checkpointed {
			tid, _ = req.Params.Meta[ThreadMetaKey].(string)
			if tid == "" {
				tid = uuid.NewString()
			}
		}
		res, err := hostcall.Invoke(ctx, info.req, t.fn, s.opts.RoutePrefix, input, tid, s.opts.MaxResultBytes)
		if err != nil {
			return toolError("invalid input: the arguments must be a JSON object"), nil
		}
		var meta mcp.Meta
		if tid != "" {
			meta = mcp.Meta{ThreadMetaKey: tid}
		}
		var out map[string]any
		switch {
		case res.TooLarge:
			r := toolError(fmt.Sprintf("the output of %s is larger than the limit of %d bytes", t.graph, s.opts.MaxResultBytes))
			r.Meta = meta
			return r, nil
		case res.Output != nil && json.Unmarshal(res.Output, &out) == nil:
			return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}, Meta: meta}, nil
		}
		r := toolError(fmt.Sprintf("%s: %s (status %d)", t.graph, res.Message, res.Status))
		r.Meta = meta
		return r, nil
	}
}
