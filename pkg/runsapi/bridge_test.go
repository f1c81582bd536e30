package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

func TestInProcessGraph_HostedExamples_InvokeAndStream(t *testing.T) {
	app, err := host.New(host.Options{AuthLevel: funchost.AuthAnonymous, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []durable.Graph{examples.MustDataPipeline(), examples.MustSupportAgent()} {
		if err := app.Register(runsapi.NewInProcessGraph(g, 0), g.Manifest().GraphName, host.RegisterOptions{}); err != nil {
			t.Fatalf("register: %v", err)
		}
	}
	support := examples.MustSupportAgent().Manifest().GraphHash
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		t.Run(tr.Name, func(t *testing.T) {
			tests := []struct {
				name, path, body string
				wantStatus       int
				wantBody         string
			}{
				{"pipeline completes", "/api/graphs/data_pipeline/invoke", `{"input": {"source_url": "https://example.com/data"}}`, 200,
					`{"output":{"status":"completed","graph_name":"data_pipeline","graph_version":"0.1.0","graph_hash":"6135ea2aa13d431c","final_node":"load","state":` + runsapitest.PipelineFinalState + `}}`},
				{"support stops at its first wait", "/api/graphs/support_agent/invoke", `{"input": {"user_message": "I want a refund"}}`, 200,
					`{"output":{"status":"waiting_for_event","graph_name":"support_agent","graph_version":"0.1.0","graph_hash":"` + support + `","current_node":"classify_request","waiting_for_event":"approval","resume_node":"draft_reply","state":{"user_message":"I want a refund","needs_human":true,"approved":null,"reviewer":null,"draft_response":null,"final_response":null,"tags":["refund"]}}}`},
				{"missing required field fails", "/api/graphs/data_pipeline/invoke", `{"input": {}}`, 500,
					`{"error":"error","detail":"Graph execution failed"}`},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res := runsapitest.Call(t, tr, "POST", tt.path, tt.body)
					if res.Status != tt.wantStatus || res.Body != tt.wantBody {
						t.Fatalf("%d %s\nwant %d %s", res.Status, res.Body, tt.wantStatus, tt.wantBody)
					}
				})
			}
			res := runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/stream", `{"input": {"source_url": "https://example.com/data"}}`)
			if res.Status != 200 {
				t.Fatalf("stream: %d %s", res.Status, res.Body)
			}
			var nodes []string
			for _, frame := range strings.Split(strings.TrimSuffix(res.Body, "\n\n"), "\n\n") {
				if !strings.HasPrefix(frame, "event: data\ndata: ") {
					continue
				}
				var chunk runsapi.InProcessChunk
				if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "event: data\ndata: ")), &chunk); err != nil {
					t.Fatalf("chunk %q: %v", frame, err)
				}
				nodes = append(nodes, chunk.Node+":"+string(chunk.Route.Action))
			}
			if got := strings.Join(nodes, ","); got != "extract:next,transform:next,load:complete" {
				t.Fatalf("stream chunks %s, want one per node", got)
			}
			if !strings.HasSuffix(res.Body, "event: end\ndata: {}\n\n") {
				t.Fatalf("stream does not end with the end frame: %q", res.Body)
			}
		})
	}
}

func TestInProcessGraph_SelfLoop_MaxStepsFails(t *testing.T) {
	type S struct {
		N int `json:"n"`
	}
	b := durable.NewManifestBuilder[S]("loop")
	b.SetEntrypoint("spin")
	_ = b.AddNode("spin", func(_ context.Context, s S) (any, error) { return durable.Update{"n": s.N + 1}, nil },
		durable.WithHandlerName("loop.spin"), durable.WithRoute(func(context.Context, S) (any, error) { return "spin", nil }), durable.WithRouteName("loop.route"))
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = runsapi.NewInProcessGraph(g, 5).Invoke(t.Context(), host.Request{Input: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "max steps exceeded: graph 'loop' made 5 node visits without completing") {
		t.Fatalf("err = %v, want max steps", err)
	}
}

func TestNewAsyncGraph_Outputs_WrappedLikeInvoke(t *testing.T) {
	boom := errors.New("model unavailable")
	tests := []struct {
		name      string
		output    any
		err       error
		state     string
		wantState string
		wantErr   error
	}{
		{"object output", map[string]any{"answer": 42}, nil, `{"q":"x"}`, `{"input":{"q":"x"},"output":{"answer":42}}`, nil},
		{"string output", "hello", nil, `{}`, `{"input":{},"output":{"result":"hello"}}`, nil},
		{"list output", []int{1, 2}, nil, `{}`, `{"input":{},"output":{"result":"[1,2]"}}`, nil},
		{"null state is empty input", nil, nil, `null`, `{"input":{},"output":{"result":"null"}}`, nil},
		{"error fails the step", nil, boom, `{}`, "", boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen json.RawMessage
			g, err := runsapi.NewAsyncGraph("agent", host.InvokeFunc(func(_ context.Context, req host.Request) (any, error) {
				seen = req.Input
				return tt.output, tt.err
			}))
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.ExecuteNode(t.Context(), runsapi.AsyncNodeName, json.RawMessage(tt.state))
			if tt.wantErr != nil {
				var he *durable.HandlerError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &he) {
					t.Fatalf("err = %v, want HandlerError wrapping %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.wantState {
				t.Fatalf("ExecuteNode = %s, %v; want %s", got, err, tt.wantState)
			}
			if tt.state != "null" && string(seen) != tt.state {
				t.Fatalf("Invoke saw input %s, want %s", seen, tt.state)
			}
		})
	}
}

func TestNewAsyncGraph_Manifest_OneTerminalNode(t *testing.T) {
	g, err := runsapi.NewAsyncGraph("agent", host.InvokeFunc(func(context.Context, host.Request) (any, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
	m := g.Manifest()
	if m.Entrypoint != runsapi.AsyncNodeName || len(m.Nodes) != 1 || !m.Nodes[0].Terminal || len(m.GraphHash) != 16 {
		t.Fatalf("manifest = %+v", m)
	}
	if d, err := g.ResolveRoute(t.Context(), runsapi.AsyncNodeName, nil); err != nil || d.Action != durable.ActionComplete {
		t.Fatalf("route = %+v, %v; want complete", d, err)
	}
	if _, err := g.ExecuteNode(t.Context(), "other", nil); !errors.Is(err, durable.ErrUnknownNode) {
		t.Fatalf("unknown node err = %v", err)
	}
	if _, err := g.ApplyEvent(t.Context(), "approval", nil, nil); !errors.Is(err, durable.ErrUnknownEvent) || err.Error() != "unknown event handler 'approval'" {
		t.Fatalf("event err = %v", err)
	}
	if _, err := runsapi.NewAsyncGraph("agent", nil); !errors.Is(err, durable.ErrInvalidGraph) {
		t.Fatalf("nil graph err = %v", err)
	}
}
