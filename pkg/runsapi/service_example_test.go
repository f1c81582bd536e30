package runsapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// The durable runs API over the embedded engine, served standalone.
func ExampleNewService() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.NewEngine(engine.EngineOptions{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
	})
	_ = eng.Start(context.Background())
	defer eng.Close()

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, _ := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: quiet})
	app, _ := svc.FunctionApp()
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}, Logger: quiet}))
	defer srv.Close()

	post, _ := http.NewRequest("POST", srv.URL+"/api/graphs/data_pipeline/runs",
		strings.NewReader(`{"instance_id": "run-1", "input": {"source_url": "https://example.com/data"}}`))
	post.Header.Set("x-functions-key", "k")
	res, _ := http.DefaultClient.Do(post)
	res.Body.Close()
	fmt.Println(res.StatusCode, strings.TrimPrefix(res.Header.Get("Location"), srv.URL))

	for {
		get, _ := http.NewRequest("GET", srv.URL+"/api/runs/run-1", nil)
		get.Header.Set("x-functions-key", "k")
		res, _ := http.DefaultClient.Do(get)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), `"runtime_status": "Completed"`) {
			fmt.Println(strings.Contains(string(body), `"final_node": "load"`))
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output:
	// 202 /api/runs/run-1
	// true
}

// Both kinds of graph on one function app: the hosting app keeps health and openapi.json, the
// durable service adds its run routes, and data_pipeline is also served in-process.
func ExampleService_Mount() {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, _ := host.New(host.Options{Logger: quiet})
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.NewEngine(engine.EngineOptions{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
	})
	svc, _ := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: quiet})
	if err := svc.Mount(h, runsapi.MountOptions{InProcess: []string{"data_pipeline"}}); err != nil {
		fmt.Println(err)
		return
	}
	for _, fn := range h.FunctionApp().HTTPFunctions() {
		fmt.Println(fn.Name, fn.Methods, fn.Route)
	}
	// Output:
	// cancel_run [POST] runs/{instance_id}/cancel
	// fg_data_pipeline_invoke [POST] graphs/data_pipeline/invoke
	// fg_data_pipeline_stream [POST] graphs/data_pipeline/stream
	// fg_health [GET] health
	// fg_health_details [GET] health/details
	// fg_openapi [GET] openapi.json
	// get_run_history [GET] runs/{instance_id}/history
	// get_run_status [GET] runs/{instance_id}
	// list_runs [GET] runs
	// purge_run [DELETE] runs/{instance_id}
	// send_run_event [POST] runs/{instance_id}/events/{event_name}
	// start_graph_run [POST] graphs/{graph_name}/runs
}
