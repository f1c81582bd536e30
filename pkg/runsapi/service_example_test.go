package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// The durable runs API over the embedded engine, served standalone.
func ExampleNewService() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.New(engine.Options{
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

// The OpenAPI document lists the run routes and one manifest fragment per registered graph.
func ExampleService_OpenAPIDocument() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	svc, _ := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction,
		Logger: slog.New(slog.DiscardHandler)})
	raw, _ := json.Marshal(svc.OpenAPIDocument())
	var doc struct {
		OpenAPI    string                     `json:"openapi"`
		Info       struct{ Title string }     `json:"info"`
		Paths      map[string]json.RawMessage `json:"paths"`
		Components struct{ Schemas json.RawMessage }
	}
	_ = json.Unmarshal(raw, &doc)
	fmt.Println(doc.OpenAPI, doc.Info.Title)
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		fmt.Println(path)
	}
	fmt.Println(strings.Contains(string(doc.Components.Schemas), `"data_pipeline"`))
	// Output:
	// 3.0.3 funcgraph durable runtime
	// /api/graphs/{graph_name}/runs
	// /api/health
	// /api/runs/{instance_id}
	// /api/runs/{instance_id}/cancel
	// /api/runs/{instance_id}/events/{event_name}
	// true
}

// The run routes alone, for a function app that serves its own health and openapi.json: with
// no Options.AuthLevel they take the level they are given (here the hosting app's).
func ExampleService_RunFunctions() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustDataPipeline())
	svc, _ := runsapi.NewService(runsapi.Options{Runs: &fakeRuns{}, Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	for _, fn := range svc.RunFunctions(funchost.AuthFunction)[:2] {
		fmt.Println(fn.Name, fn.Methods, fn.Route, fn.AuthLevel)
	}
	// Output:
	// start_graph_run [POST] graphs/{graph_name}/runs function
	// get_run_status [GET] runs/{instance_id} function
}
