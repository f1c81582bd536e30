package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// invokeGraphs are the graphs of the invoke contract tests.
func invokeGraphs() map[string]InvocableGraph {
	return map[string]InvocableGraph{
		"echo": &fakeInvoker{},
		"chat": &fakeInvoker{checkpointer: true},
		"ver": &fakeInvoker{version: true, invoke: func(_ context.Context, req Request) (any, error) {
			return map[string]any{"version": req.Version, "thread": req.Config.ThreadID}, nil
		}},
		"str": &fakeInvoker{invoke: func(context.Context, Request) (any, error) { return "héllo <b>", nil }},
		"num": &fakeInvoker{invoke: func(context.Context, Request) (any, error) { return []int{1, 2}, nil }},
		"boom": &fakeInvoker{invoke: func(context.Context, Request) (any, error) {
			return nil, errors.New("secret failure text")
		}},
		"panics": &fakeInvoker{invoke: func(context.Context, Request) (any, error) { panic("secret panic text") }},
		"nan": &fakeInvoker{invoke: func(context.Context, Request) (any, error) {
			return map[string]float64{"x": float64Inf()}, nil
		}},
		"open": &fakeInvoker{},
	}
}

func float64Inf() float64 { var zero float64; return 1 / zero }

// padTo returns an invoke body of exactly n bytes.
func padTo(n int) string {
	head, tail := `{"input":{},"pad":"`, `"}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

func TestInvoke_Contract_BothTransports(t *testing.T) {
	obs := &recordingObserver{}
	app := testApp(t, Options{Observer: obs}, invokeGraphs(), map[string]RegisterOptions{
		"open": {AuthLevel: funchost.AuthAnonymous},
	})
	tests := []struct {
		name   string
		graph  string
		body   string
		noKey  bool
		status int
		want   string // exact body
		events []string
		onHost *response // status and body expected on the emulated host, when they differ
	}{
		{name: "object output passes through", graph: "echo", body: `{"input":{"b":1,"a":"<é>"}}`, status: 200,
			want: `{"output":{"b":1,"a":"<é>"}}`, events: []string{"started", "completed"}},
		{name: "unknown top-level keys ignored", graph: "echo", body: `{"input":{"x":1},"extra":[1],"config":null,"version":null}`, status: 200,
			want: `{"output":{"x":1}}`, events: []string{"started", "completed"}},
		{name: "duplicate keys last wins", graph: "echo", body: `{"input":{"x":1},"input":{"y":2}}`, status: 200,
			want: `{"output":{"y":2}}`, events: []string{"started", "completed"}},
		{name: "string output wrapped", graph: "str", body: `{"input":{}}`, status: 200,
			want: `{"output":{"result":"héllo <b>"}}`, events: []string{"started", "completed"}},
		{name: "array output wrapped as JSON text", graph: "num", body: `{"input":{}}`, status: 200,
			want: `{"output":{"result":"[1,2]"}}`, events: []string{"started", "completed"}},
		{name: "body of exactly the cap passes", graph: "echo", body: padTo(DefaultMaxRequestBodyBytes), status: 200,
			want: `{"output":{}}`, events: []string{"started", "completed"}},
		{name: "body one byte over the cap", graph: "echo", body: padTo(DefaultMaxRequestBodyBytes + 1), status: 400,
			want: errBody("Request body too large: 1048577 bytes (max 1048576 bytes)"), events: []string{"rejected:invalid_request"}},
		{name: "empty body", graph: "echo", body: "", status: 400, want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"}},
		{name: "BOM", graph: "echo", body: "\ufeff{\"input\":{}}", status: 400, want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"}},
		// The host reads JSON-mode bodies as text and replaces invalid UTF-8 with U+FFFD before
		// the handler sees them; only the standalone server hands the raw bytes over.
		{name: "invalid utf8", graph: "echo", body: "{\"input\":{\"a\":\"\xff\"}}", status: 400, want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"},
			onHost: &response{status: 200, body: "{\"output\":{\"a\":\"\ufffd\"}}"}},
		{name: "NaN", graph: "echo", body: `{"input":{"a":NaN}}`, status: 400, want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"}},
		{name: "Infinity", graph: "echo", body: `{"input":{"a":Infinity}}`, status: 400, want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"}},
		{name: "body not an object", graph: "echo", body: `[1]`, status: 422, events: []string{"rejected:invalid_request"}},
		{name: "input missing", graph: "echo", body: `{"config":{}}`, status: 422, events: []string{"rejected:invalid_request"}},
		{name: "input not an object", graph: "echo", body: `{"input":[1]}`, status: 422, events: []string{"rejected:invalid_request"}},
		{name: "config not an object", graph: "echo", body: `{"input":{},"config":"x"}`, status: 422, events: []string{"rejected:invalid_request"}},
		{name: "version not a string", graph: "echo", body: `{"input":{},"version":1}`, status: 422, events: []string{"rejected:invalid_request"}},
		{name: "31 nesting wrappers pass", graph: "echo", body: `{"input":` + nest(31, "{}") + `}`, status: 200,
			want: `{"output":` + nest(31, "{}") + `}`, events: []string{"started", "completed"}},
		{name: "32 nesting wrappers fail", graph: "echo", body: `{"input":` + nest(32, "{}") + `}`, status: 400,
			want: errBody("Input exceeds maximum nesting depth of 32"), events: []string{"rejected:invalid_request"}},
		{name: "10000 nodes pass", graph: "echo", body: `{"input":{"a":` + items(9999) + `}}`, status: 200,
			want: `{"output":{"a":` + items(9999) + `}}`, events: []string{"started", "completed"}},
		{name: "10001 nodes fail", graph: "echo", body: `{"input":{"a":` + items(10000) + `}}`, status: 400,
			want: errBody("Input exceeds maximum node count of 10000"), events: []string{"rejected:invalid_request"}},
		{name: "config depth checked", graph: "echo", body: `{"input":{},"config":` + nest(32, "{}") + `}`, status: 400,
			want: errBody("Input exceeds maximum nesting depth of 32"), events: []string{"rejected:invalid_request"}},
		{name: "input and config counted separately", graph: "echo",
			body: `{"input":{"a":` + items(9999) + `},"config":{"a":` + items(9999) + `}}`, status: 200,
			want: `{"output":{"a":` + items(9999) + `}}`, events: []string{"started", "completed"}},
		{name: "configurable not an object", graph: "echo", body: `{"input":{},"config":{"configurable":[]}}`, status: 400,
			want: errBody("config.configurable must be an object"), events: []string{"rejected:invalid_config"}},
		{name: "thread_id not a string", graph: "echo", body: `{"input":{},"config":{"configurable":{"thread_id":1}}}`, status: 400,
			want: errBody("config.configurable.thread_id must be a string"), events: []string{"rejected:invalid_config"}},
		{name: "thread_id with newline", graph: "echo", body: `{"input":{},"config":{"configurable":{"thread_id":"t1\n"}}}`, status: 400,
			want: errBody("Thread ID must contain only printable ASCII characters"), events: []string{"rejected:invalid_config"}},
		{name: "thread_id empty", graph: "echo", body: `{"input":{},"config":{"configurable":{"thread_id":""}}}`, status: 400,
			want: errBody("Thread ID must not be empty"), events: []string{"rejected:invalid_config"}},
		{name: "thread_id null is absent", graph: "echo", body: `{"input":{"k":1},"config":{"configurable":{"thread_id":null}}}`, status: 200,
			want: `{"output":{"k":1}}`, events: []string{"started", "completed"}},
		{name: "checkpointed graph needs thread_id", graph: "chat", body: `{"input":{}}`, status: 400,
			want: errBody("config.configurable.thread_id is required for checkpointed graphs"), events: []string{"rejected:invalid_config"}},
		{name: "checkpointed graph with thread_id", graph: "chat", body: `{"input":{"m":1},"config":{"configurable":{"thread_id":"t1"}}}`, status: 200,
			want: `{"output":{"m":1}}`, events: []string{"started", "completed"}},
		{name: "version refused", graph: "echo", body: `{"input":{},"version":"2"}`, status: 422,
			want: errBody("Graph 'echo' does not accept a 'version' argument (requires langgraph>=1.1)"), events: []string{"rejected:unsupported_version"}},
		{name: "version forwarded", graph: "ver", body: `{"input":{},"version":"2","config":{"configurable":{"thread_id":"t'1"}}}`, status: 200,
			want: `{"output":{"thread":"t'1","version":"2"}}`, events: []string{"started", "completed"}},
		{name: "graph error hidden", graph: "boom", body: `{"input":{}}`, status: 500,
			want: errBody("Graph execution failed"), events: []string{"started", "failed"}},
		{name: "graph panic hidden", graph: "panics", body: `{"input":{}}`, status: 500,
			want: errBody("Graph execution failed"), events: []string{"started", "failed"}},
		{name: "unencodable output", graph: "nan", body: `{"input":{}}`, status: 500,
			want: errBody("Graph execution failed"), events: []string{"started", "failed"}},
		{name: "no key is 401 from the host", graph: "echo", body: `{"input":{}}`, noKey: true, status: 401, want: ""},
		{name: "per-graph anonymous override", graph: "open", body: `{"input":{"o":1}}`, noKey: true, status: 200,
			want: `{"output":{"o":1}}`, events: []string{"started", "completed"}},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			t.Run(tr.Name+"/"+tt.name, func(t *testing.T) {
				obs.reset()
				key := tr.FunctionKey
				if tt.noKey {
					key = ""
				}
				got := call(t, tr, "POST", "/api/graphs/"+tt.graph+"/invoke", tt.body, key)
				if tt.onHost != nil && tr.Name == funchosttest.TransportEmulatedHost {
					tt.status, tt.want, tt.events = tt.onHost.status, tt.onHost.body, []string{"started", "completed"}
				}
				if got.status != tt.status {
					t.Fatalf("status = %d, want %d (body %.200s)", got.status, tt.status, got.body)
				}
				if tt.want != "" || tt.status == 401 {
					if got.body != tt.want {
						t.Fatalf("body = %.300s, want %.300s", got.body, tt.want)
					}
				}
				if tt.status == 422 && tt.want == "" && !strings.HasPrefix(got.body, `{"error":"error","detail":"Validation error: `) {
					t.Fatalf("422 body = %s", got.body)
				}
				if tt.status != 401 && !isJSONType(got.header.Get("Content-Type")) {
					t.Fatalf("Content-Type = %q", got.header.Get("Content-Type"))
				}
				if strings.Contains(got.body, "secret") {
					t.Fatalf("error text leaked: %s", got.body)
				}
				wantEvents := [][]string{}
				if tt.events != nil {
					wantEvents = [][]string{tt.events}
				}
				if ev := obs.events(); fmt.Sprint(ev) != fmt.Sprint(wantEvents) {
					t.Fatalf("observer events = %v, want %v", ev, wantEvents)
				}
			})
		}
	}
}
