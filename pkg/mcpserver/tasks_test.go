package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

var refund = map[string]any{"user_message": "I want a refund"}

func TestTasks_InputRequiredThenUpdateCompletesWithRunOutput(t *testing.T) {
	r := newRig(t, mcpserver.Options{})
	for _, tr := range funchosttest.Transports(t, r.app) {
		t.Run(tr.Name, func(t *testing.T) {
			created := callTask(t, tr, "support_agent", refund)
			if created.ResultType != "task" || created.Status != mcpserver.TaskInputRequired || created.TaskID == "" || created.PollIntervalMs <= 0 {
				t.Fatalf("tools/call answer = %+v", created)
			}
			got := getTask(t, tr, created.TaskID)
			if got.ResultType != "complete" || got.Status != mcpserver.TaskInputRequired {
				t.Fatalf("tasks/get = %+v", got)
			}
			var req struct {
				Method string `json:"method"`
			}
			if err := json.Unmarshal(got.InputRequests["approval"], &req); err != nil || req.Method != "elicitation/create" {
				t.Fatalf("inputRequests = %v", got.InputRequests)
			}
			_, res, e := rpc(t, tr, "tasks/update", map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{
				"approval": map[string]any{"action": "accept", "content": map[string]any{"approved": true, "reviewer": "ann"}},
			}})
			if e != nil || string(res) != "{}" {
				t.Fatalf("tasks/update = %s, %+v", res, e)
			}
			done := awaitTask(t, tr, created.TaskID, mcpserver.TaskCompleted)
			var out struct {
				StructuredContent struct {
					FinalNode string `json:"final_node"`
					State     struct {
						Approved bool   `json:"approved"`
						Reviewer string `json:"reviewer"`
					} `json:"state"`
				} `json:"structuredContent"`
			}
			if err := json.Unmarshal(done.Result, &out); err != nil {
				t.Fatal(err)
			}
			if sc := out.StructuredContent; sc.FinalNode != "finalize_reply" || !sc.State.Approved || sc.State.Reviewer != "ann" {
				t.Fatalf("task result = %s", done.Result)
			}
		})
	}
}

func TestTasks_CancelCancelsTheRun(t *testing.T) {
	r := newRig(t, mcpserver.Options{})
	for _, tr := range funchosttest.Transports(t, r.app) {
		t.Run(tr.Name, func(t *testing.T) {
			id := callTask(t, tr, "support_agent", refund).TaskID
			if _, res, e := rpc(t, tr, "tasks/cancel", map[string]any{"taskId": id}); e != nil || string(res) != "{}" {
				t.Fatalf("tasks/cancel = %s, %+v", res, e)
			}
			awaitTask(t, tr, id, mcpserver.TaskCancelled)
			run, err := r.eng.GetRun(t.Context(), id)
			if err != nil || run.RuntimeStatus != engine.StatusTerminated {
				t.Fatalf("run = %v, %v", run.RuntimeStatus, err)
			}
			if _, _, e := rpc(t, tr, "tasks/cancel", map[string]any{"taskId": id}); e == nil || e.Code != -32602 || e.Message != "task is already cancelled" {
				t.Fatalf("second tasks/cancel error = %+v", e)
			}
		})
	}
}

func TestTasks_AnotherCallerCannotReadUpdateOrCancel(t *testing.T) {
	r := newRig(t, mcpserver.Options{Isolation: newIsolation(t)})
	tr := funchosttest.Transports(t, r.app)[0] // the identity header is the standalone server's
	a, b := []string{"X-Test-User", "alice"}, []string{"X-Test-User", "bob"}
	id := callTask(t, tr, "support_agent", refund, a...).TaskID
	run, err := r.eng.GetRun(t.Context(), id)
	if err != nil || !strings.Contains(string(run.Input.Metadata), `"owner":"alice"`) {
		t.Fatalf("run metadata = %s, %v", run.Input.Metadata, err)
	}
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"tasks/get", map[string]any{"taskId": id}},
		{"tasks/cancel", map[string]any{"taskId": id}},
		{"tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approval": map[string]any{"action": "accept", "content": map[string]any{"approved": true}}}}},
	} {
		if _, _, e := rpc(t, tr, call.method, call.params, b...); e == nil || e.Message != "task not found" {
			t.Fatalf("bob %s error = %+v", call.method, e)
		}
	}
	if got := getTask(t, tr, id, a...); got.Status != mcpserver.TaskInputRequired {
		t.Fatalf("alice tasks/get after bob = %+v", got)
	}
	if status, _, e := rpc(t, tr, "tasks/get", map[string]any{"taskId": id}); status != http.StatusUnauthorized || e == nil ||
		e.Message != "unauthorized: the request carries no caller identity" {
		t.Fatalf("no identity: %d %+v", status, e)
	}
}

func TestTasks_BadRequestsAnswerJSONRPCErrors(t *testing.T) {
	r := newRig(t, mcpserver.Options{MaxRequestBodyBytes: 4096, MaxInputDepth: 3})
	tr := funchosttest.Transports(t, r.app)[0]
	id := callTask(t, tr, "support_agent", refund).TaskID
	cases := []struct {
		name       string
		method     string
		params     any
		headers    []string
		wantStatus int
		wantCode   int
		wantMsg    string
	}{
		{"no task id", "tasks/get", map[string]any{}, nil, http.StatusOK, -32602, "invalid params: tasks/get needs a taskId string"},
		{"unknown task", "tasks/get", map[string]any{"taskId": "nope"}, nil, http.StatusOK, -32602, "task not found"},
		{"unknown method", "tasks/list", map[string]any{}, nil, http.StatusOK, -32601, "method not found: tasks/list"},
		{"name header mismatch", "tasks/get", map[string]any{"taskId": id}, []string{"Mcp-Name", "other"}, http.StatusBadRequest, -32020, "the Mcp-Name header does not match params.taskId"},
		{"no responses", "tasks/update", map[string]any{"taskId": id}, nil, http.StatusOK, -32602, "invalid params: tasks/update needs inputResponses"},
		{"declined", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approval": map[string]any{"action": "decline"}}}, nil, http.StatusOK, -32602,
			`invalid params: input approval must be an accepted elicitation result ({"action": "accept", "content": {...}})`},
		{"input not requested", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"other": map[string]any{"action": "accept"}}}, nil, http.StatusOK, -32602, "the task requests no input other"},
		{"input too deep", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approval": map[string]any{"action": "accept", "content": nested(4)}}}, nil, http.StatusOK, -32602,
			"invalid params: input approval exceeds maximum nesting depth of 3"},
		{"body too large", "tasks/get", map[string]any{"taskId": strings.Repeat("x", 5000)}, nil, http.StatusRequestEntityTooLarge, -32600, "request body too large: the limit is 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, e := rpc(t, tr, c.method, c.params, c.headers...)
			if status != c.wantStatus || e == nil || e.Code != c.wantCode || e.Message != c.wantMsg {
				t.Fatalf("answer %d %+v, want %d %d %q", status, e, c.wantStatus, c.wantCode, c.wantMsg)
			}
		})
	}
	if got := getTask(t, tr, id); got.Status != mcpserver.TaskInputRequired {
		t.Fatalf("task after bad requests = %+v", got)
	}
}

// nested returns objects nested depth deep: {"a": {"a": ... {}}}.
func nested(depth int) map[string]any {
	m := map[string]any{}
	for range depth - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// TestTasks_UpdateSentTwiceStoresOneAnswer: a client that lost the reply of tasks/update and
// sends it again stores its answer once. The engine that answers is not running, so both
// updates meet the same wait.
func TestTasks_UpdateSentTwiceStoresOneAnswer(t *testing.T) {
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		t.Fatal(err)
	}
	store, queue, payloads := memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()
	running, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads})
	if err != nil {
		t.Fatal(err)
	}
	if err := running.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr := funchosttest.Transports(t, mcpApp(t, mcpserver.Options{Runs: running, Registry: reg}))[0]
	id := callTask(t, tr, "support_agent", refund).TaskID
	awaitTask(t, tr, id, mcpserver.TaskInputRequired)
	if err := running.Close(); err != nil {
		t.Fatal(err)
	}
	idle, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads})
	if err != nil {
		t.Fatal(err)
	}
	tr = funchosttest.Transports(t, mcpApp(t, mcpserver.Options{Runs: idle, Registry: reg}))[0]
	update := map[string]any{"taskId": id, "inputResponses": map[string]any{
		"approval": map[string]any{"action": "accept", "content": map[string]any{"approved": true}},
	}}
	for range 2 {
		if _, res, e := rpc(t, tr, "tasks/update", update); e != nil || string(res) != "{}" {
			t.Fatalf("tasks/update = %s, %+v", res, e)
		}
	}
	h, err := idle.History(t.Context(), id, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	received := 0
	for _, ev := range h.Events {
		if ev.Type == engine.HistoryEventReceived {
			received++
		}
	}
	if received != 1 {
		t.Fatalf("%d answers stored, want 1", received)
	}
}
