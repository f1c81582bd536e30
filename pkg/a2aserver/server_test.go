package a2aserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// serve runs support_agent on a started in-memory engine behind the A2A endpoint, through
// both transports, with isolation iso (nil: off).
func serve(t *testing.T, iso *isolation.Isolation) []funchosttest.Transport {
	t.Helper()
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		t.Fatal(err)
	}
	logger := funchosttest.TestLogger(t)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	srv, err := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, Isolation: iso, Logger: logger,
		TextFields: map[string]string{"support_agent": "user_message"}, MaxRequestBodyBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	app := funchost.NewFunctionApp()
	if err := srv.Register(app); err != nil {
		t.Fatal(err)
	}
	return funchosttest.Transports(t, app)
}

// client calls one agent as one identity ("" none).
type client struct {
	t    *testing.T
	tr   funchosttest.Transport
	id   string
	path string
}

func newClient(t *testing.T, tr funchosttest.Transport, id string) client {
	return client{t: t, tr: tr, id: id, path: "/api/a2a/support_agent"}
}

func (c client) post(body string) (int, string, http.Header) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.tr.BaseURL+c.path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-functions-key", c.tr.FunctionKey)
	if c.id != "" {
		req.Header.Set(isolation.PrincipalIDHeader, c.id)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return res.StatusCode, b.String(), res.Header
}

type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a JSON-RPC request and returns its answer (HTTP 200 expected).
func (c client) call(method, params string) rpcAnswer {
	c.t.Helper()
	status, body, _ := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":%s}`, method, params))
	var a rpcAnswer
	if status != http.StatusOK || json.Unmarshal([]byte(body), &a) != nil {
		c.t.Fatalf("%s: %d %s", method, status, body)
	}
	return a
}

func (c client) task(method, params string) a2aserver.Task {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, a.Error.Code, a.Error.Message)
	}
	var t a2aserver.Task
	if method == "SendMessage" {
		var r a2aserver.SendMessageResponse
		if err := json.Unmarshal(a.Result, &r); err != nil || r.Task == nil {
			c.t.Fatalf("%s: result %s", method, a.Result)
		}
		return *r.Task
	}
	if err := json.Unmarshal(a.Result, &t); err != nil {
		c.t.Fatalf("%s: result %s", method, a.Result)
	}
	return t
}

func (c client) wantError(method, params string, code int) string {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error == nil || a.Error.Code != code {
		c.t.Fatalf("%s %s: want error %d, got %+v result %s", method, params, code, a.Error, a.Result)
	}
	return a.Error.Message
}

// messageSeq numbers the tests' messages: a message id names the task it starts.
var messageSeq atomic.Int64

func textMessage(text string) string {
	return fmt.Sprintf(`{"message":{"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":%q}]}}`, messageSeq.Add(1), text)
}

func answerMessage(taskID, data string) string {
	return fmt.Sprintf(`{"message":{"messageId":"a-%d","taskId":%q,"role":"ROLE_USER","parts":[{"data":%s}]}}`, messageSeq.Add(1), taskID, data)
}

func finalResponse(t *testing.T, task a2aserver.Task) string {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("artifacts: %+v", task.Artifacts)
	}
	var s examples.SupportState
	if err := json.Unmarshal(task.Artifacts[0].Parts[0].Data, &s); err != nil || s.FinalResponse == nil {
		t.Fatalf("artifact: %s", task.Artifacts[0].Parts[0].Data)
	}
	return *s.FinalResponse
}

func TestServer_SendMessage_CompletesWithTheRunOutput(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			task := c.task("SendMessage", textMessage("hello there"))
			if task.Status.State != a2aserver.StateCompleted || task.ContextID == "" || task.ID == "" {
				t.Fatalf("task: %+v", task)
			}
			if got := finalResponse(t, task); !strings.HasPrefix(got, "Thanks for reaching out") {
				t.Fatalf("final response: %q", got)
			}
			got := c.task("GetTask", fmt.Sprintf(`{"id":%q}`, task.ID))
			if got.Status.State != a2aserver.StateCompleted || got.ContextID != task.ContextID {
				t.Fatalf("GetTask: %+v", got)
			}
			c.wantError("CancelTask", fmt.Sprintf(`{"id":%q}`, task.ID), a2aserver.CodeTaskNotCancelable)
			c.wantError("SendMessage", answerMessage(task.ID, `{"approved":true}`), a2aserver.CodeUnsupportedOperation)

			// The same message again (its answer lost): the task it started, no second run.
			msg := textMessage("hello again")
			first, again := c.task("SendMessage", msg), c.task("SendMessage", msg)
			if first.ID != again.ID || again.Status.State != a2aserver.StateCompleted || again.Status.Timestamp != first.Status.Timestamp {
				t.Fatalf("a message sent twice: %+v then %+v", first, again)
			}
			c.wantError("SendMessage", `{"message":{"role":"ROLE_USER","parts":[{"text":"no id"}]}}`, a2aserver.CodeInvalidParams)
		})
	}
}

func TestServer_InputRequired_AnsweredCompletes(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			task := c.task("SendMessage", textMessage("I want a refund"))
			if task.Status.State != a2aserver.StateInputRequired || task.Status.Message == nil {
				t.Fatalf("task: %+v", task)
			}
			if got := *task.Status.Message.Parts[0].Text; got != "waiting for event approval" {
				t.Fatalf("status message: %q", got)
			}
			done := c.task("SendMessage", answerMessage(task.ID, `{"approved":true,"reviewer":"ana"}`))
			if done.ID != task.ID || done.Status.State != a2aserver.StateCompleted {
				t.Fatalf("answered: %+v", done)
			}
			if got := finalResponse(t, done); !strings.HasSuffix(got, "Reviewer: ana.") {
				t.Fatalf("final response: %q", got)
			}
		})
	}
}

func TestServer_CancelTask_CancelsTheRun(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			task := c.task("SendMessage", textMessage("legal question"))
			if task.Status.State != a2aserver.StateInputRequired {
				t.Fatalf("task: %+v", task)
			}
			sub := c.stream("SubscribeToTask", fmt.Sprintf(`{"id":%q}`, task.ID))
			if len(sub) != 1 || sub[0].Task.Status.State != a2aserver.StateInputRequired {
				t.Fatalf("SubscribeToTask: %+v", sub)
			}
			if got := c.task("CancelTask", fmt.Sprintf(`{"id":%q}`, task.ID)); got.Status.State != a2aserver.StateCanceled {
				t.Fatalf("CancelTask: %+v", got)
			}
			got := c.task("GetTask", fmt.Sprintf(`{"id":%q}`, task.ID))
			if got.Status.State != a2aserver.StateCanceled {
				t.Fatalf("GetTask: %+v", got)
			}
			c.wantError("CancelTask", fmt.Sprintf(`{"id":%q}`, task.ID), a2aserver.CodeTaskNotCancelable)
			c.wantError("SubscribeToTask", fmt.Sprintf(`{"id":%q}`, task.ID), a2aserver.CodeUnsupportedOperation)
		})
	}
}

// stream sends a streaming request and returns its events.
func (c client) stream(method, params string) []a2aserver.StreamResponse {
	c.t.Helper()
	status, body, h := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":%s}`, method, params))
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		c.t.Fatalf("%s: %d %s %s", method, status, h.Get("Content-Type"), body)
	}
	var out []a2aserver.StreamResponse
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Result a2aserver.StreamResponse `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			c.t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev.Result)
	}
	if len(out) == 0 || out[0].Task == nil {
		c.t.Fatalf("%s: stream %s", method, body)
	}
	return out
}

func TestServer_SendStreamingMessage_StreamsToInputRequiredThenCompleted(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			evs := c.stream("SendStreamingMessage", textMessage("refund please"))
			last := evs[len(evs)-1]
			state := ""
			if last.StatusUpdate != nil {
				state = last.StatusUpdate.Status.State
			} else if last.Task != nil {
				state = last.Task.Status.State
			}
			if state != a2aserver.StateInputRequired {
				t.Fatalf("stream: %+v", evs)
			}
			id := evs[0].Task.ID
			evs = c.stream("SendStreamingMessage", answerMessage(id, `{"approved":true,"reviewer":"bo"}`))
			// The run may complete before the stream's first event: then the task is the
			// only event, else an artifact and a final status update follow it.
			var final a2aserver.Task
			if last := evs[len(evs)-1]; last.Task != nil {
				final = *last.Task
			} else if last.StatusUpdate != nil && len(evs) >= 3 && evs[len(evs)-2].ArtifactUpdate != nil {
				final = a2aserver.Task{ID: last.StatusUpdate.TaskID, Status: last.StatusUpdate.Status,
					Artifacts: []a2aserver.Artifact{evs[len(evs)-2].ArtifactUpdate.Artifact}}
			}
			if final.ID != id || final.Status.State != a2aserver.StateCompleted {
				t.Fatalf("stream: %+v", evs)
			}
			if got := finalResponse(t, final); !strings.HasSuffix(got, "Reviewer: bo.") {
				t.Fatalf("final response: %q", got)
			}
		})
	}
}

func newIsolation(t *testing.T) *isolation.Isolation {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	return iso
}

func TestServer_Isolation_ATaskIsItsCallersRun(t *testing.T) {
	for _, tr := range serve(t, newIsolation(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			// The transports share one engine: identities of their own per transport.
			a, b := newClient(t, tr, "alice-"+tr.Name), newClient(t, tr, "bob-"+tr.Name)
			ta := a.task("SendMessage", textMessage("refund for alice"))
			tb := b.task("SendMessage", textMessage("hello from bob"))
			get := func(id string) string { return fmt.Sprintf(`{"id":%q}`, id) }
			b.wantError("GetTask", get(ta.ID), a2aserver.CodeTaskNotFound)
			b.wantError("CancelTask", get(ta.ID), a2aserver.CodeTaskNotFound)
			b.wantError("SendMessage", answerMessage(ta.ID, `{"approved":true}`), a2aserver.CodeTaskNotFound)
			b.wantError("SubscribeToTask", get(ta.ID), a2aserver.CodeTaskNotFound)
			if got := a.task("GetTask", get(ta.ID)); got.Status.State != a2aserver.StateInputRequired {
				t.Fatalf("alice's task: %+v", got)
			}
			list := func(c client, params string) []string {
				t.Helper()
				r := c.call("ListTasks", params)
				var l a2aserver.ListTasksResponse
				if r.Error != nil || json.Unmarshal(r.Result, &l) != nil {
					t.Fatalf("ListTasks: %+v %s", r.Error, r.Result)
				}
				var ids []string
				for _, task := range l.Tasks {
					ids = append(ids, task.ID)
				}
				return ids
			}
			if got := list(a, `{}`); len(got) != 1 || got[0] != ta.ID {
				t.Fatalf("alice lists %v, want [%s]", got, ta.ID)
			}
			if got := list(b, `{}`); len(got) != 1 || got[0] != tb.ID {
				t.Fatalf("bob lists %v, want [%s]", got, tb.ID)
			}
			if got := list(a, `{"status":"TASK_STATE_COMPLETED"}`); len(got) != 0 {
				t.Fatalf("alice's completed tasks: %v", got)
			}
			if got := list(a, `{"status":"TASK_STATE_INPUT_REQUIRED"}`); len(got) != 1 {
				t.Fatalf("alice's input-required tasks: %v", got)
			}
			if got := list(b, fmt.Sprintf(`{"contextId":%q}`, tb.ContextID)); len(got) != 1 || got[0] != tb.ID {
				t.Fatalf("bob's context lists %v", got)
			}
			if status, body, _ := newClient(t, tr, "").post(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`); status != http.StatusUnauthorized {
				t.Fatalf("no identity: %d %s", status, body)
			}
		})
	}
}

func TestServer_BadRequests_AnswerJSONRPCErrors(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			c.wantError("NoSuchMethod", `{}`, a2aserver.CodeMethodNotFound)
			c.wantError("GetTask", `{"id":"nope"}`, a2aserver.CodeTaskNotFound)
			c.wantError("GetTask", `[]`, a2aserver.CodeInvalidParams)
			c.wantError("SendMessage", `{"message":{"messageId":"x","role":"ROLE_USER","parts":[]}}`, a2aserver.CodeInvalidParams)
			c.wantError("SendMessage", `{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"data":[1]}]}}`, a2aserver.CodeInvalidParams)
			c.wantError("SendMessage", `{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"url":"https://x/y"}]}}`, a2aserver.CodeContentTypeNotSupported)
			c.wantError("SendMessage", `{"message":{"messageId":"x","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`, a2aserver.CodeInvalidParams)
			c.wantError("CreateTaskPushNotificationConfig", `{}`, a2aserver.CodePushNotificationNotSupported)
			c.wantError("SendMessage", `{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://x/hook"}}}`, a2aserver.CodePushNotificationNotSupported)
			c.wantError("ListTasks", `{"pageSize":1000}`, a2aserver.CodeInvalidParams)
			if status, body, _ := c.post(`not json`); status != http.StatusOK || !strings.Contains(body, "-32700") {
				t.Fatalf("parse error: %d %s", status, body)
			}
			big := textMessage(strings.Repeat("x", 5000))
			if status, body, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + big + `}`); status != http.StatusRequestEntityTooLarge {
				t.Fatalf("large body: %d %s", status, body)
			}
			other := client{t: t, tr: tr, path: "/api/a2a/no_such_graph"}
			if status, _, _ := other.post(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`); status != http.StatusNotFound {
				t.Fatalf("unknown agent: %d", status)
			}
		})
	}
}

func TestServer_AgentCard_NamesTheEndpoint(t *testing.T) {
	for _, tr := range serve(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.BaseURL+"/api/a2a/support_agent/.well-known/agent-card.json", nil)
			req.Header.Set("x-functions-key", tr.FunctionKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var card a2aserver.AgentCard
			if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&card) != nil {
				t.Fatalf("card: %d", res.StatusCode)
			}
			if card.Name != "support_agent" || len(card.SupportedInterfaces) != 1 || !card.Capabilities.Streaming ||
				!strings.HasSuffix(card.SupportedInterfaces[0].URL, "/api/a2a/support_agent") || card.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" {
				t.Fatalf("card: %+v", card)
			}
		})
	}
}
