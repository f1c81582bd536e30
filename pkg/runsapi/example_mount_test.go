package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// A hosted graph run durably: its invoke becomes the one node of a durable graph, and the
// run's final state holds the input and the output. (Mount does this for every graph registered
// with host.RegisterOptions{AsyncMode: true}.)
func ExampleNewAsyncGraph() {
	summarize := host.InvokeFunc(func(_ context.Context, req host.Request) (any, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Input, &in); err != nil {
			return nil, err
		}
		return map[string]int{"words": len(strings.Fields(in.Text))}, nil
	})
	g, err := runsapi.NewAsyncGraph("summarize", summarize)
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = eng.Start(ctx)
	defer eng.Close()

	run, _ := eng.StartRun(ctx, engine.StartRunRequest{GraphName: "summarize", InstanceID: "run-1",
		Input: json.RawMessage(`{"text": "durable runs survive restarts"}`)})
	run, _ = eng.WaitRun(ctx, run.InstanceID, nil)
	out, _ := engine.DecodeOutput[json.RawMessage](run)
	fmt.Println(run.RuntimeStatus, out.FinalNode, string(out.State))
	// Output: Completed invoke {"input":{"text":"durable runs survive restarts"},"output":{"words":4}}
}

// A durable graph served in-process through the hosting routes: invoke runs it to completion
// (or to its first wait) in the request, storing nothing.
func ExampleNewInProcessGraph() {
	app, _ := host.New(host.Options{AuthLevel: funchost.AuthAnonymous, Logger: slog.New(slog.DiscardHandler)})
	if err := app.Register(runsapi.NewInProcessGraph(examples.MustDataPipeline(), 0), "data_pipeline", host.RegisterOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(app.FunctionApp().Standalone(funchost.StandaloneOptions{}))
	defer srv.Close()

	res, err := http.Post(srv.URL+"/api/graphs/data_pipeline/invoke", "application/json",
		strings.NewReader(`{"input": {"source_url": "https://example.com/data"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	var body struct {
		Output runsapi.InProcessResult `json:"output"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	fmt.Println(res.StatusCode, body.Output.Status, body.Output.FinalNode)
	// Output: 200 completed load
}

// Under the Functions host, the host's queue trigger delivers the engine's work items and a
// timer runs the repair pass; RegisterWorker adds both functions (the engine's own dispatcher,
// Start, is then not run).
func ExampleRegisterWorker() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	app := funchost.NewFunctionApp()
	err := runsapi.RegisterWorker(app, runsapi.WorkerOptions{Worker: eng, QueueName: "funcgraph-work"})
	fmt.Println(err)
	for _, fn := range app.QueueFunctions() {
		fmt.Println("queue:", fn.Name, fn.QueueName)
	}
	for _, fn := range app.TimerFunctions() {
		fmt.Println("timer:", fn.Name)
	}
	// Output:
	// <nil>
	// queue: fg_orchestrator funcgraph-work
	// timer: fg_repair
}

// Both kinds of graph on one function app: the hosting app keeps health and openapi.json, the
// durable service adds its run routes, and data_pipeline is also served in-process.
func ExampleMount() {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, _ := host.New(host.Options{Logger: quiet})
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.New(engine.Options{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
	})
	svc, _ := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: quiet})
	if err := runsapi.Mount(svc, h, runsapi.MountOptions{InProcess: []string{"data_pipeline"}}); err != nil {
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
	// fg_inspector [GET] inspector
	// fg_openapi [GET] openapi.json
	// get_graph_manifest [GET] graphs/{graph_name}/manifest
	// get_run_feed [GET] runs/{instance_id}/feed
	// get_run_history [GET] runs/{instance_id}/history
	// get_run_state [GET] runs/{instance_id}/state
	// get_run_status [GET] runs/{instance_id}
	// list_graphs [GET] graphs
	// list_graph_versions [GET] graphs/{graph_name}/versions
	// list_runs [GET] runs
	// purge_run [DELETE] runs/{instance_id}
	// rewind_run [POST] runs/{instance_id}/rewind
	// rewind_runs [POST] runs/rewind
	// send_run_event [POST] runs/{instance_id}/events/{event_name}
	// start_graph_run [POST] graphs/{graph_name}/runs
}
