package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

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

func newRig(t *testing.T, opts mcpserver.Options) *rig {
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
	return &rig{eng: eng, app: app}
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
