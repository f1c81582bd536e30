package mcpserver

// The MCP Tasks extension (io.modelcontextprotocol/tasks, SEP-2663, the 2026-07-28
// lifecycle), backed by durable runs, for clients that declare it in a request's
// _meta client capabilities: a tools/call whose run outlasts the call is answered with a
// task (resultType "task"), whose id is the run's id; tasks/get reads the run, tasks/update
// carries an input_required answer into the event the run waits for, tasks/cancel cancels
// the run. Nothing of a task is kept in process: every instance answers for every task.
//
// The Go SDK lacks the extension (modelcontextprotocol/go-sdk#942): this file is all of it,
// so that it can give way to the SDK's when that lands.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// ExtensionTasks is the identifier of the Tasks extension, in a client's and the server's
// capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// DefaultPollIntervalMs is the pollIntervalMs of every task: how often a client should read it.
const DefaultPollIntervalMs = 1000

// JSON-RPC codes of the task methods.
const (
	codeMethodNotFound = -32601
	codeInternal       = -32603
	// codeHeaderMismatch answers an Mcp-Name header that names another task than the body.
	codeHeaderMismatch = -32020
)

// taskMetaKey is the member of a tool result's _meta by which a tool call tells the
// middleware to answer it with a task; it never reaches the client.
const taskMetaKey = "io.funcgraph/task"

// wantsTasks reports whether a request's _meta declares the Tasks extension among the
// client's capabilities.
func wantsTasks(meta mcp.Meta) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[ExtensionTasks]
	return ok
}

// task is a task as the extension's results carry it.
type task struct {
	ResultType     string         `json:"resultType"`
	TaskID         string         `json:"taskId"`
	Status         string         `json:"status"`
	StatusMessage  string         `json:"statusMessage,omitempty"`
	CreatedAt      string         `json:"createdAt"`
	LastUpdatedAt  string         `json:"lastUpdatedAt"`
	TTLMs          *int64         `json:"ttlMs"`
	PollIntervalMs int            `json:"pollIntervalMs"`
	InputRequests  map[string]any `json:"inputRequests,omitempty"`
	Result         any            `json:"result,omitempty"`
	Error          *rpcErrorBody  `json:"error,omitempty"`
}

// rpcErrorBody is a JSON-RPC error object.
type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// taskOf returns the task of run: its status, and what the status carries (the input the
// run waits for, its output, its failure). resultType is "task" for the answer of a
// tools/call, "complete" for tasks/get.
func (s *Server) taskOf(run engine.Run, resultType string, info requestInfo) task {
	t := task{
		ResultType: resultType, TaskID: run.InstanceID, Status: TaskWorking,
		CreatedAt: run.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: run.UpdatedAt.UTC().Format(time.RFC3339Nano),
		PollIntervalMs: DefaultPollIntervalMs,
		StatusMessage:  "run " + strings.ToLower(string(run.RuntimeStatus)) + "; status: " + runURL(info.base, s.opts.RoutePrefix, run.InstanceID),
	}
	switch run.RuntimeStatus {
	case engine.StatusCompleted:
		t.Status, t.StatusMessage = TaskCompleted, ""
		t.Result = s.result(run, info)
	case engine.StatusFailed:
		var reason string
		if json.Unmarshal(run.Output, &reason) != nil {
			reason = string(run.Output)
		}
		t.Status, t.StatusMessage = TaskFailed, reason
		t.Error = &rpcErrorBody{Code: codeInternal, Message: "run failed: " + reason}
	case engine.StatusTerminated:
		t.Status = TaskCancelled
		_ = json.Unmarshal(run.Output, &t.StatusMessage)
	default:
		if p, ok := run.Progress(); ok && run.RuntimeStatus == engine.StatusRunning && p.WaitingForEvent != "" {
			t.Status = TaskInputRequired
			t.StatusMessage = "the run waits for event " + p.WaitingForEvent
			t.InputRequests = map[string]any{p.WaitingForEvent: map[string]any{
				"method": "elicitation/create",
				"params": map[string]any{
					"mode":            "form",
					"message":         "Run " + run.InstanceID + " waits for event " + p.WaitingForEvent + ": the accepted content is its payload.",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
				},
			}}
		}
	}
	return t
}

// taskResult is a tools/call answered with a task. It embeds the tool result only to be an
// mcp.Result; it is written as the task.
type taskResult struct {
	*mcp.CallToolResult
	task task
}

// MarshalJSON writes the task.
func (r *taskResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.task) }

// taskMiddleware answers with its task a tools/call whose handler marked its result
// (taskMetaKey).
func taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		ctr, ok := res.(*mcp.CallToolResult)
		if !ok {
			return res, nil
		}
		t, ok := ctr.Meta[taskMetaKey].(task)
		if !ok {
			return res, nil
		}
		delete(ctr.Meta, taskMetaKey)
		return &taskResult{CallToolResult: ctr, task: t}, nil
	}
}

// rpcRequest is the envelope of one JSON-RPC request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// serveTaskMethod answers a tasks/* request (the SDK does not know the methods) and reports
// true, or reports false with r's body intact for the SDK. body is r's body, read whole
// within the limit.
func (s *Server) serveTaskMethod(w http.ResponseWriter, r *http.Request, body []byte, info requestInfo) bool {
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req rpcRequest
	if json.Unmarshal(body, &req) != nil || !strings.HasPrefix(req.Method, "tasks/") {
		return false // not one request, or not ours: the SDK answers it
	}
	reply := func(result any, e *rpcErrorBody, status int) {
		out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if e != nil {
			out["error"] = e
		} else {
			out["result"] = result
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}
	if len(req.ID) == 0 || string(req.ID) == "null" {
		reply(nil, &rpcErrorBody{Code: codeInvalidRequest, Message: "invalid request: " + req.Method + " needs an id"}, http.StatusBadRequest)
		return true
	}
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if req.Method != "tasks/get" && req.Method != "tasks/update" && req.Method != "tasks/cancel" {
		reply(nil, &rpcErrorBody{Code: codeMethodNotFound, Message: "method not found: " + req.Method}, http.StatusOK)
		return true
	}
	if json.Unmarshal(req.Params, &p) != nil || p.TaskID == "" {
		reply(nil, &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: " + req.Method + " needs a taskId string"}, http.StatusOK)
		return true
	}
	if name := r.Header.Get("Mcp-Name"); name != "" && name != p.TaskID {
		reply(nil, &rpcErrorBody{Code: codeHeaderMismatch, Message: "the Mcp-Name header does not match params.taskId"}, http.StatusBadRequest)
		return true
	}
	result, e := s.taskMethod(r.Context(), req.Method, p.TaskID, p.InputResponses, info)
	reply(result, e, http.StatusOK)
	return true
}

// errTaskNotFound answers a task that does not exist or is another caller's, alike.
var errTaskNotFound = &rpcErrorBody{Code: codeInvalidParams, Message: "task not found"}

// taskMethod runs one task method for the caller and returns its result or its error.
func (s *Server) taskMethod(ctx context.Context, method, id string, responses map[string]json.RawMessage, info requestInfo) (any, *rpcErrorBody) {
	run, err := s.opts.Runs.GetRun(ctx, id)
	if errors.Is(err, engine.ErrRunNotFound) || errors.Is(err, engine.ErrInvalidInstanceID) || (err == nil && !owns(info.caller, run)) {
		return nil, errTaskNotFound
	}
	if err != nil {
		s.opts.Logger.ErrorContext(ctx, "mcp task read run", "run_id", id, "error", err)
		return nil, &rpcErrorBody{Code: codeInternal, Message: "internal error"}
	}
	switch method {
	case "tasks/get":
		return s.taskOf(run, "complete", info), nil
	case "tasks/cancel":
		if run.RuntimeStatus.Finished() {
			return nil, &rpcErrorBody{Code: codeInvalidParams, Message: "task is already " + s.taskOf(run, "", info).Status}
		}
		if err := s.opts.Runs.CancelRun(ctx, id, "cancelled by the MCP client"); err != nil {
			return nil, s.runError(ctx, id, err)
		}
		return map[string]any{}, nil
	}
	// tasks/update
	if len(responses) == 0 {
		return nil, &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: tasks/update needs inputResponses"}
	}
	p, _ := run.Progress()
	for key, raw := range responses {
		if run.RuntimeStatus != engine.StatusRunning || key != p.WaitingForEvent {
			return nil, &rpcErrorBody{Code: codeInvalidParams, Message: "the task requests no input " + key}
		}
		var resp struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &resp) != nil || resp.Action != "accept" {
			return nil, &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: input " + key + " must be an accepted elicitation result ({\"action\": \"accept\", \"content\": {...}})"}
		}
		if len(resp.Content) == 0 {
			resp.Content = json.RawMessage("{}")
		}
		if jsonlimit.Check(resp.Content, s.opts.MaxInputDepth, 0) != nil {
			return nil, &rpcErrorBody{Code: codeInvalidParams, Message: fmt.Sprintf("invalid params: input %s exceeds maximum nesting depth of %d", key, s.opts.MaxInputDepth)}
		}
		// One answer per wait: a client that lost the reply and sends the update again stores
		// nothing more (the wait is the run's step, which the stored event does not move).
		var opts []engine.EventOption
		if run.Step > 0 {
			opts = append(opts, engine.WithIdempotencyKey(fmt.Sprintf("mcp:%s:%d", key, run.Step)))
		}
		if err := s.opts.Runs.RaiseEvent(ctx, id, key, resp.Content, opts...); err != nil {
			return nil, s.runError(ctx, id, err)
		}
	}
	return map[string]any{}, nil
}

// runError answers what the engine refused of a task method.
func (s *Server) runError(ctx context.Context, id string, err error) *rpcErrorBody {
	var (
		finished *engine.RunFinishedError
		noEvent  *engine.UnknownEventError
		payload  *durable.EventPayloadError
	)
	switch {
	case errors.As(err, &noEvent):
		return &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: " + noEvent.Error()}
	case errors.As(err, &payload):
		return &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: " + payload.Error()}
	case errors.As(err, &finished):
		return &rpcErrorBody{Code: codeInvalidParams, Message: "task is finished"}
	case errors.Is(err, engine.ErrRunNotFound):
		return errTaskNotFound
	case errors.Is(err, engine.ErrInvalidEventPayload):
		return &rpcErrorBody{Code: codeInvalidParams, Message: "invalid params: the input is not a valid event payload"}
	case errors.Is(err, engine.ErrConflict):
		return &rpcErrorBody{Code: codeInternal, Message: "task is busy, retry later"}
	}
	s.opts.Logger.ErrorContext(ctx, "mcp task method", "run_id", id, "error", err)
	return &rpcErrorBody{Code: codeInternal, Message: "internal error"}
}

// owns reports whether c may see run: an admin any, another caller the runs whose metadata
// names it as their owner.
func owns(c isolation.Caller, run engine.Run) bool {
	if c.Admin {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(run.Input.Metadata, &m) != nil {
		return false
	}
	var owner string
	if json.Unmarshal(m[isolation.OwnerKey], &owner) != nil {
		return false
	}
	return c.Owns(owner)
}
