package exampleapp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// The example binary's whole main: the entrypoint reads the environment and Launch builds the
// app from it.
func ExampleLaunch() {
	var build launch.Builder = exampleapp.Launch
	_ = build // in main: launch.Main(exampleapp.Launch)
}

// Build the example app on in-memory storage and serve it standalone, with a host-level
// function key as the Functions host would check it.
func ExampleBuild() {
	app, err := exampleapp.Build(exampleapp.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer app.Close()
	srv := httptest.NewServer(app.FunctionApp.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/graphs/echo_agent/invoke",
		strings.NewReader(`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "config": {"configurable": {"thread_id": "t1"}}}`))
	req.Header.Set("x-functions-key", "k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 {"output":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hi"}]}}
}

// Start runs the embedded durable engine until Close: a run started through the runs API then
// completes in this process.
func ExampleApp_Start() {
	app, err := exampleapp.Build(exampleapp.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := app.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer app.Close()
	srv := httptest.NewServer(app.FunctionApp.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}))
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("x-functions-key", "k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	code, _ := call(http.MethodPost, "/api/graphs/data_pipeline/runs",
		`{"instance_id": "run-1", "input": {"source_url": "https://example.com/data"}}`)
	fmt.Println(code)
	for {
		code, body := call(http.MethodGet, "/api/runs/run-1", "")
		if code != http.StatusOK || !strings.Contains(body, `"runtime_status": "Pending"`) && !strings.Contains(body, `"runtime_status": "Running"`) {
			fmt.Println(code, strings.Contains(body, `"runtime_status": "Completed"`), strings.Contains(body, "Loaded 3 records"))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// 202
	// 200 true true
}
