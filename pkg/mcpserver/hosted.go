package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
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
	return levelRank(t.fn.AuthLevel) <= levelRank(s.level)
}

func levelRank(l funchost.AuthLevel) int {
	switch l {
	case funchost.AuthAnonymous:
		return 0
	case funchost.AuthAdmin:
		return 2
	}
	return 1
}

// hostedHandler runs t's graph through its invoke route, with the request's headers (its
// caller), and answers the route's output as structured content or its error as a tool
// error.
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
		body, err := invokeBody(input, tid)
		if err != nil {
			return toolError("invalid input: the arguments must be a JSON object"), nil
		}
		// The route sees the caller as the MCP request showed it: its headers, its peer and
		// what the function app knows of it (key level, source, invocation), and ends with
		// the call.
		hr, err := http.NewRequestWithContext(valuesOf{ctx, info.req.Context()}, http.MethodPost,
			info.base+"/"+s.opts.RoutePrefix+"/"+t.fn.Route, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("hosted tool %s: %w", t.graph, err)
		}
		hr.Header = info.req.Header.Clone()
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Del("Content-Length")
		hr.RemoteAddr = info.req.RemoteAddr
		rec := &recorder{header: http.Header{}, limit: s.opts.MaxResultBytes}
		t.fn.Handler.ServeHTTP(rec, hr)
		return s.hostedResult(t, tid, rec), nil
	}
}

// valuesOf is the context of a call (its deadline and cancellation) with the values of the
// request that carried it.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

// invokeBody is the invoke request of one call: {"input": …} and, on a thread, its config.
func invokeBody(input json.RawMessage, tid string) ([]byte, error) {
	if input[0] != '{' {
		return nil, fmt.Errorf("arguments are not an object")
	}
	b := struct {
		Input  json.RawMessage `json:"input"`
		Config any             `json:"config,omitempty"`
	}{Input: input}
	if tid != "" {
		b.Config = map[string]any{"configurable": map[string]any{"thread_id": tid}}
	}
	return json.Marshal(b)
}

// hostedResult answers what the invoke route wrote: 200's output as structured content (the
// route's {"output": …}), an answer past Options.MaxResultBytes or any other status a tool
// error with the route's own public message.
func (s *Server) hostedResult(t hostedTool, tid string, rec *recorder) *mcp.CallToolResult {
	var meta mcp.Meta
	if tid != "" {
		meta = mcp.Meta{ThreadMetaKey: tid}
	}
	if rec.overflow {
		r := toolError(fmt.Sprintf("the output of %s is larger than the limit of %d bytes", t.graph, s.opts.MaxResultBytes))
		r.Meta = meta
		return r
	}
	if rec.status() == http.StatusOK {
		var ok struct {
			Output json.RawMessage `json:"output"`
		}
		var out map[string]any
		if json.Unmarshal(rec.body.Bytes(), &ok) == nil && json.Unmarshal(ok.Output, &out) == nil {
			return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: string(ok.Output)}}, Meta: meta}
		}
	}
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	msg := http.StatusText(rec.status())
	if json.Unmarshal(rec.body.Bytes(), &e) == nil && len(e.Detail) > 0 {
		var text string
		if json.Unmarshal(e.Detail, &text) == nil {
			msg = text
		} else {
			msg = string(e.Detail) // a validation error's list, as the route answers it
		}
	}
	r := toolError(fmt.Sprintf("%s: %s (status %d)", t.graph, strings.TrimSpace(msg), rec.status()))
	r.Meta = meta
	return r
}

// recorder is the http.ResponseWriter of an in-process invoke: it keeps up to limit bytes
// of the body and notes an answer past them.
type recorder struct {
	header   http.Header
	code     int
	body     bytes.Buffer
	limit    int64
	overflow bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if int64(r.body.Len())+int64(len(p)) > r.limit {
		r.overflow = true
		return 0, fmt.Errorf("mcpserver: tool result past %d bytes", r.limit)
	}
	return r.body.Write(p)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
