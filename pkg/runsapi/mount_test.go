package runsapi_test

import (
	"context"
	"errors"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// echoGraph answers {"echo": <input>}.
var echoGraph = host.InvokeFunc(func(_ context.Context, req host.Request) (any, error) {
	return map[string]any{"echo": req.Input}, nil
})

// noRuns is an engine.Runs for a service whose runs are never called: any call panics.
type noRuns struct{ engine.Runs }

// mountedApp builds a hosting app with the hosted graph "echo" (async) and the three example
// durable graphs, data_pipeline also served in-process, on one function app.
func mountedApp(t *testing.T) (*host.GraphHostApp, *runsapi.Service) {
	t.Helper()
	logger := funchosttest.TestLogger(t)
	h, err := host.New(host.Options{AuthLevel: funchost.AuthAnonymous, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Register(echoGraph, "echo", host.RegisterOptions{AsyncMode: true}); err != nil {
		t.Fatal(err)
	}
	reg := runsapitest.Registry(t, examples.All)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := runsapi.Mount(svc, h, runsapi.MountOptions{InProcess: []string{"data_pipeline"}}); err != nil {
		t.Fatalf("Mount: %v", err)
	}
	return h, svc
}

func TestMount_OneApp_BothKindsOfGraph(t *testing.T) {
	h, _ := mountedApp(t)
	for _, tr := range funchosttest.Transports(t, h.FunctionApp()) {
		t.Run(tr.Name, func(t *testing.T) {
			res := runsapitest.Call(t, tr, "GET", "/api/health", "")
			if res.Status != 200 || res.Body != `{"status":"ok"}` {
				t.Fatalf("health: %d %s", res.Status, res.Body)
			}
			res = runsapitest.Call(t, tr, "GET", "/api/health/details", "")
			for _, want := range []string{`"graphs":[{"name":"echo"`, `{"name":"data_pipeline"`,
				`"durable_graphs":[{"graph_name":"data_pipeline","version":"0.1.0","graph_hash":"6135ea2aa13d431c"`,
				`{"graph_name":"support_agent","version":"0.1.0","graph_hash":"af183f226f37e6fc","entrypoint":"classify_request","state_model_name":"SupportState","nodes":["classify_request","draft_reply","finalize_reply"],"events":["approval"]}`,
				`{"graph_name":"echo","version":"0.1.0"`} {
				if res.Status != 200 || !strings.Contains(res.Body, want) {
					t.Fatalf("health details lacks %s: %d %s", want, res.Status, res.Body)
				}
			}

			// The hosted graph, invoked and run asynchronously.
			runsapitest.Call(t, tr, "POST", "/api/graphs/echo/invoke", `{"input": {"q": "hi"}}`).Expect(t, "invoke echo", 200, `{"output":{"echo":{"q":"hi"}}}`)
			id := runsapitest.UniqueID(tr, "echo-async")
			runsapitest.Start(t, tr, "echo", id, `{"q": "hi"}`)
			res = runsapitest.Poll(t, tr, id, runsapitest.Finished)
			if !strings.Contains(res.Body, `"runtime_status": "Completed"`) ||
				!strings.Contains(res.Body, `"final_node": "invoke", "state": {"input": {"q": "hi"}, "output": {"echo": {"q": "hi"}}}}`) {
				t.Fatalf("async run: %s", res.Body)
			}

			// A durable graph, run durably and in-process.
			id = runsapitest.UniqueID(tr, "pipeline-mounted")
			runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "https://example.com/data"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "durable run", 200, runsapitest.StatusBody(id, "Completed", runsapitest.Custom4("data_pipeline", runsapitest.PipelineHash, "load"),
				runsapitest.RunInput("data_pipeline", runsapitest.PipelineHash, `{"source_url":"https://example.com/data"}`),
				runsapitest.CompletedOutput("data_pipeline", runsapitest.PipelineHash, "load", runsapitest.PipelineFinalState)))
			res = runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/invoke", `{"input": {"source_url": "https://example.com/data"}}`)
			if res.Status != 200 || !strings.HasPrefix(res.Body, `{"output":{"status":"completed","graph_name":"data_pipeline"`) {
				t.Fatalf("in-process invoke: %d %s", res.Status, res.Body)
			}
			// support_agent is durable only.
			if res := runsapitest.Call(t, tr, "POST", "/api/graphs/support_agent/invoke", `{"input": {}}`); res.Status != 404 {
				t.Fatalf("support_agent invoke: %d, want the host's 404", res.Status)
			}

			res = runsapitest.Call(t, tr, "GET", "/api/openapi.json", "")
			for _, want := range []string{`"/api/runs/{instance_id}": {"get": {"operationId": "get_run_status"`, `"/api/graphs/{graph_name}/runs": {"post": {"operationId": "start_graph_run"`,
				`"RunStatus": {"type": "object"`, `"HealthResponse": `, `"DurableHealthResponse": `} {
				if res.Status != 200 || !strings.Contains(res.Body, want) {
					t.Fatalf("hosting openapi.json lacks %s: %s", want, res.Body)
				}
			}
		})
	}
}

func TestMount_Conflicts_FailAtStartup(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) error
	}{
		{"hosted and durable graph share a name", func(t *testing.T) error {
			h, _ := host.New(host.Options{})
			if err := h.Register(echoGraph, "support_agent", host.RegisterOptions{}); err != nil {
				t.Fatal(err)
			}
			svc, _ := runsapi.NewService(runsapi.Options{Runs: noRuns{}, Registry: runsapitest.Registry(t, examples.All), AuthLevel: funchost.AuthFunction})
			return runsapi.Mount(svc, h, runsapi.MountOptions{})
		}},
		{"mounted twice", func(t *testing.T) error {
			h, _ := mountedApp(t)
			svc2, _ := runsapi.NewService(runsapi.Options{Runs: noRuns{}, Registry: durable.NewRegistry(), AuthLevel: funchost.AuthFunction})
			err := runsapi.Mount(svc2, h, runsapi.MountOptions{})
			if !errors.Is(err, funchost.ErrRouteConflict) {
				t.Fatalf("second mount err = %v, want a route conflict", err)
			}
			return err
		}},
		{"in-process name unknown", func(t *testing.T) error {
			h, _ := host.New(host.Options{})
			svc, _ := runsapi.NewService(runsapi.Options{Runs: noRuns{}, Registry: durable.NewRegistry(), AuthLevel: funchost.AuthFunction})
			return runsapi.Mount(svc, h, runsapi.MountOptions{InProcess: []string{"nope"}})
		}},
		{"in-process name of an internal graph", func(t *testing.T) error {
			h, _ := host.New(host.Options{})
			reg := durable.NewRegistry()
			if _, err := platformruns.Register(reg); err != nil {
				t.Fatal(err)
			}
			svc, _ := runsapi.NewService(runsapi.Options{Runs: noRuns{}, Registry: reg, AuthLevel: funchost.AuthFunction})
			return runsapi.Mount(svc, h, runsapi.MountOptions{InProcess: []string{platformruns.GraphName}})
		}},
		{"hosted graph takes an internal graph's name", func(t *testing.T) error {
			h, _ := host.New(host.Options{})
			if err := h.Register(echoGraph, platformruns.GraphName, host.RegisterOptions{}); err != nil {
				t.Fatal(err)
			}
			reg := durable.NewRegistry()
			if _, err := platformruns.Register(reg); err != nil {
				t.Fatal(err)
			}
			svc, _ := runsapi.NewService(runsapi.Options{Runs: noRuns{}, Registry: reg, AuthLevel: funchost.AuthFunction})
			return runsapi.Mount(svc, h, runsapi.MountOptions{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.setup(t)
			if !errors.Is(err, runsapi.ErrMount) {
				t.Fatalf("Mount err = %v, want ErrMount", err)
			}
			t.Log(err)
		})
	}
}
