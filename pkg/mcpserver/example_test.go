package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// keyed adds the function key to every request.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-functions-key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// A durable graph as an MCP tool, called with the Go SDK's client.
func ExampleNew() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	_ = eng.Start(context.Background())
	defer eng.Close()

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, _ := mcpserver.New(mcpserver.Options{Runs: eng, Registry: reg, Logger: quiet})
	app := funchost.NewFunctionApp()
	_ = app.HandleHTTP(srv.Function(funchost.AuthFunction))
	hs := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}, Logger: quiet}))
	defer hs.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: hs.URL + "/api/mcp", HTTPClient: &http.Client{Transport: keyed{key: "k"}},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	tools, _ := cs.ListTools(ctx, nil)
	fmt.Println(tools.Tools[0].Name)
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "support_agent", Arguments: map[string]any{"user_message": "hello"}})
	out := res.StructuredContent.(map[string]any)
	fmt.Println(out["final_node"])
	// Output:
	// support_agent
	// finalize_reply
}

// A hosted graph as an MCP tool beside the durable ones (Options.Hosted): the call runs the
// graph within it, through its invoke route.
func ExampleOptions_hosted() {
	reg := durable.NewRegistry()
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	_ = eng.Start(context.Background())
	defer eng.Close()

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, _ := host.New(host.Options{Logger: quiet})
	type greeting struct {
		Name string `json:"name"`
	}
	hello := host.Func[greeting, map[string]string](func(_ context.Context, in greeting) (map[string]string, error) {
		return map[string]string{"greeting": "hello, " + in.Name}, nil
	})
	_ = h.Register(hello, "hello", host.RegisterOptions{RequestModel: greeting{}})
	srv, _ := mcpserver.New(mcpserver.Options{Runs: eng, Registry: reg, Hosted: h, Logger: quiet})
	app := funchost.NewFunctionApp()
	_ = app.HandleHTTP(srv.Function(funchost.AuthFunction))
	hs := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}, Logger: quiet}))
	defer hs.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: hs.URL + "/api/mcp", HTTPClient: &http.Client{Transport: keyed{key: "k"}},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "Ada"}})
	fmt.Println(res.StructuredContent.(map[string]any)["greeting"])
	// Output:
	// hello, Ada
}
