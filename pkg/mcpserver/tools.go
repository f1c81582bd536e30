package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// tool is one graph offered as a tool.
type tool struct {
	graph string
	def   *mcp.Tool
}

// stater is a graph whose state has a Go model (durable.GraphRegistration).
type stater interface{ StateType() reflect.Type }

// graphTools returns one tool per public graph of reg, in the registry's order.
func graphTools(reg *durable.Registry) ([]tool, error) {
	var out []tool
	for _, g := range reg.Public() {
		m := g.Manifest()
		var typ reflect.Type
		if st, ok := g.(stater); ok {
			typ = st.StateType()
		}
		in := inputSchema(typ)
		desc := fmt.Sprintf("Start a durable run of graph %s (version %s) with this initial state; answers the run's output when it completes within the call, else its id and status URL.",
			m.GraphName, m.Version)
		if d, _ := m.Metadata["description"].(string); d != "" {
			desc = d + " " + desc
		}
		out = append(out, tool{graph: m.GraphName, def: &mcp.Tool{
			Name: m.GraphName, Description: desc, InputSchema: in,
		}})
	}
	return out, nil
}

// callHandler starts a run of t's graph for the request's caller and answers it.
func (s *Server) callHandler(t tool, info requestInfo) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input := bytes.TrimSpace(req.Params.Arguments)
		if len(input) == 0 || string(input) == "null" {
			input = []byte("{}")
		}
		if jsonlimit.Check(input, s.opts.MaxInputDepth, 0) != nil {
			return toolError(fmt.Sprintf("invalid initial state: the arguments exceed maximum nesting depth of %d", s.opts.MaxInputDepth)), nil
		}
		owner := ""
		if !info.caller.Admin {
			owner = info.caller.ID
		}
		ctx = membudget.NewWork(ctx, owner)
		run, err := s.opts.Runs.StartRun(ctx, engine.StartRunRequest{
			GraphName: t.graph, Input: input, Metadata: ownerMetadata(info.caller),
		})
		if err != nil {
			return s.startError(ctx, t.graph, err)
		}
		s.opts.Logger.InfoContext(ctx, "durable run started", "run_id", run.InstanceID, "graph", t.graph, "via", "mcp")
		run, err = s.await(ctx, run, newProgress(req))
		if err != nil {
			return nil, err
		}
		if wantsTasks(req.Params.Meta) && !run.RuntimeStatus.Finished() {
			t := s.taskOf(run, "task", info)
			t.InputRequests = nil // tasks/get carries them: a client reads its task there
			return &mcp.CallToolResult{Meta: mcp.Meta{taskMetaKey: t}}, nil
		}
		return s.result(run, info), nil
	}
}

// ownerMetadata is the metadata of a run the caller starts: {"owner": id} for a non-admin
// (the runs API's, isolation.go there), {} for an admin.
func ownerMetadata(c isolation.Caller) json.RawMessage {
	if c.Admin {
		return json.RawMessage("{}")
	}
	id, _ := json.Marshal(c.ID)
	return json.RawMessage(`{"` + isolation.OwnerKey + `":` + string(id) + `}`)
}

// startError answers a start the engine refused: what the caller sent wrong is a tool error
// (the model can correct its arguments), anything else an internal error, logged.
func (s *Server) startError(ctx context.Context, graph string, err error) (*mcp.CallToolResult, error) {
	var state *durable.StateErrors
	switch {
	case errors.As(err, &state):
		msgs := make([]string, len(state.Issues))
		for i, is := range state.Issues {
			msgs[i] = is.Msg
			if is.Field != "" {
				msgs[i] = is.Field + ": " + is.Msg
			}
		}
		return toolError("invalid initial state: " + strings.Join(msgs, "; ")), nil
	case errors.Is(err, engine.ErrInvalidRunInput):
		return toolError("invalid initial state: the arguments must be a JSON object"), nil
	case errors.Is(err, durable.ErrUnknownGraph):
		return toolError("graph " + graph + " is not registered"), nil
	case errors.Is(err, engine.ErrConflict):
		return toolError("the run is busy, retry later"), nil
	}
	s.opts.Logger.ErrorContext(ctx, "mcp start run", "graph", graph, "error", err)
	return nil, errors.New("internal error")
}

// toolError is a tool result with IsError and msg as its text.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// waiting reports whether run is unfinished and waits for an event or a child run: nothing
// will move it within the call unless someone sends the event.
func waiting(run engine.Run) bool {
	p, ok := run.Progress()
	return ok && run.RuntimeStatus == engine.StatusRunning && (p.WaitingForEvent != "" || p.WaitingForChild != "")
}

// await reads run until it finishes, waits for an event, or Options.CallWait has passed,
// through the engine's feed when Runs has one (woken as the run moves), else by reading it
// again at intervals. Only an error of the context or of storage ends it early. With p, each
// page of the feed, its live channel's records included, is sent as progress (progress.go).
func (s *Server) await(ctx context.Context, run engine.Run, p *progress) (engine.Run, error) {
	deadline := time.Now().Add(s.opts.CallWait)
	feeder, _ := s.opts.Runs.(engine.RunFeeder)
	var after, liveAfter int64
	var token string
	for {
		cur, err := s.opts.Runs.GetRun(ctx, run.InstanceID)
		if err != nil {
			return run, fmt.Errorf("read run %s: %w", run.InstanceID, err)
		}
		run = cur
		left := time.Until(deadline)
		if run.RuntimeStatus.Finished() || waiting(run) || left <= 0 {
			return run, nil
		}
		if feeder != nil {
			page, err := feeder.Feed(ctx, run.InstanceID, engine.FeedQuery{After: after, Run: token, Wait: left,
				Live: p != nil, LiveAfter: liveAfter})
			if err != nil {
				return run, fmt.Errorf("feed run %s: %w", run.InstanceID, err)
			}
			p.page(ctx, page)
			after, token, liveAfter = page.NextAfter, page.Run, max(liveAfter, page.LiveNext)
			continue
		}
		t := time.NewTimer(min(left, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return run, ctx.Err()
		case <-t.C:
		}
	}
}

// result answers a run as read by await: a completed run's output as structured content, a
// failed or terminated one a tool error, an unfinished one its id, status and status URL.
func (s *Server) result(run engine.Run, info requestInfo) *mcp.CallToolResult {
	url := runURL(info.base, s.opts.RoutePrefix, run.InstanceID)
	switch run.RuntimeStatus {
	case engine.StatusCompleted:
		var out map[string]any
		_ = json.Unmarshal(run.Output, &out)
		return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: string(run.Output)}}}
	case engine.StatusFailed, engine.StatusTerminated:
		var reason string
		if json.Unmarshal(run.Output, &reason) != nil {
			reason = string(run.Output)
		}
		what := "failed"
		if run.RuntimeStatus == engine.StatusTerminated {
			what = "was cancelled"
		}
		return toolError(fmt.Sprintf("run %s %s: %s (status: %s)", run.InstanceID, what, reason, url))
	}
	state := "working"
	text := fmt.Sprintf("run %s is %s; follow it at %s", run.InstanceID, strings.ToLower(string(run.RuntimeStatus)), url)
	if p, ok := run.Progress(); ok && p.WaitingForEvent != "" {
		state = "input_required"
		text = fmt.Sprintf("run %s waits for event %q: send it with POST %s/events/%s; follow the run at %s",
			run.InstanceID, p.WaitingForEvent, url, p.WaitingForEvent, url)
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta: mcp.Meta{"io.funcgraph/run": map[string]any{
			"instance_id": run.InstanceID, "runtime_status": string(run.RuntimeStatus), "state": state, "status_url": url,
		}},
	}
}
