package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// rig is the MCP endpoint over a running in-memory engine with support_agent (completes for
// a general message, waits for "approval" on a refund) and data_pipeline.
type rig struct {
	eng *engine.Engine
	app *funchost.FunctionApp
}

func newRig(t testing.TB, opts mcpserver.Options) *rig {
	t.Helper()
	reg := durable.NewRegistry()
	for _, g := range []durable.Graph{examples.MustSupportAgent(), examples.MustDataPipeline()} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	opts.Runs, opts.Registry = eng, reg
	return &rig{eng: eng, app: mcpApp(t, opts)}
}

// mcpApp is a function app serving the MCP endpoint of opts at function auth.
func mcpApp(t testing.TB, opts mcpserver.Options) *funchost.FunctionApp {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	app := funchost.NewFunctionApp()
	if err := app.HandleHTTP(srv.Function(funchost.AuthFunction)); err != nil {
		t.Fatal(err)
	}
	return app
}

// headers adds fixed headers to every request.
type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// connect returns a session of the SDK's client on tr's MCP endpoint, sending key and any
// extra header pairs.
func connect(t *testing.T, tr funchosttest.Transport, key string, kv ...string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{"X-Functions-Key": {key}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   tr.BaseURL + "/api/mcp",
		HTTPClient: &http.Client{Transport: headers{h: h, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatalf("%s: connect: %v", tr.Name, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// runMeta returns the io.funcgraph/run member of a result's _meta.
func runMeta(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.Meta["io.funcgraph/run"].(map[string]any)
	if !ok {
		b, _ := json.Marshal(res)
		t.Fatalf("result has no io.funcgraph/run meta: %s", b)
	}
	return m
}

// newIsolation is isolation by the X-Test-User header from loopback.
func newIsolation(t *testing.T) *isolation.Isolation {
	t.Helper()
	proxies, err := isolation.ParseProxies("127.0.0.1/32,::1/128")
	if err != nil {
		t.Fatal(err)
	}
	iso, err := isolation.New(isolation.Config{IdentityHeader: "X-Test-User", TrustedProxies: proxies})
	if err != nil {
		t.Fatal(err)
	}
	return iso
}

func engineQuery() engine.RunQuery { return engine.RunQuery{} }

// recorder keeps the body of the last tools/call response it carried.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	last []byte
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var isCall bool
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		isCall = bytes.Contains(b, []byte(`"tools/call"`))
	}
	res, err := rec.next.RoundTrip(r)
	if err != nil || !isCall {
		return res, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(b))
	rec.mu.Lock()
	rec.last = b
	rec.mu.Unlock()
	return res, nil
}

// taskView is the members of a task the tests read.
type taskView struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs int                        `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *rpcErr                    `json:"error"`
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// callTask calls tool with args through the SDK's client declaring the Tasks extension and
// returns the task the raw answer holds.
func callTask(t *testing.T, tr funchosttest.Transport, tool string, args map[string]any, kv ...string) taskView {
	t.Helper()
	h := http.Header{"X-Functions-Key": {tr.FunctionKey}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(mcpserver.ExtensionTasks, nil)
	rec := &recorder{next: headers{h: h, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: tr.BaseURL + "/api/mcp", HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var env struct {
		Result taskView `json:"result"`
	}
	if err := json.Unmarshal(rec.last, &env); err != nil {
		t.Fatalf("tools/call answer %s: %v", rec.last, err)
	}
	return env.Result
}

// rpc posts one JSON-RPC request to tr's MCP endpoint and returns the HTTP status and the
// result or error of the answer.
func rpc(t *testing.T, tr funchosttest.Transport, method string, params any, kv ...string) (status int, result json.RawMessage, e *rpcErr) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tr.BaseURL+"/api/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Functions-Key", tr.FunctionKey)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var env struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcErr         `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s answer %d %q: %v", method, res.StatusCode, b, err)
	}
	if env.Error == nil && string(env.ID) != "7" {
		t.Fatalf("%s answer id %s", method, env.ID)
	}
	return res.StatusCode, env.Result, env.Error
}

// getTask reads a task with tasks/get; it fails the test on an error answer.
func getTask(t *testing.T, tr funchosttest.Transport, id string, kv ...string) taskView {
	t.Helper()
	_, res, e := rpc(t, tr, "tasks/get", map[string]any{"taskId": id}, kv...)
	if e != nil {
		t.Fatalf("tasks/get %s: %+v", id, e)
	}
	var v taskView
	if err := json.Unmarshal(res, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// awaitTask reads a task until its status is want (the run moves on the engine's workers),
// up to the test's deadline.
func awaitTask(t *testing.T, tr funchosttest.Transport, id, want string, kv ...string) taskView {
	t.Helper()
	for {
		v := getTask(t, tr, id, kv...)
		switch {
		case v.Status == want:
			return v
		case v.Status == mcpserver.TaskCompleted || v.Status == mcpserver.TaskFailed || v.Status == mcpserver.TaskCancelled:
			t.Fatalf("task %s ended %s, want %s", id, v.Status, want)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("task %s: status %s, want %s", id, v.Status, want)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
