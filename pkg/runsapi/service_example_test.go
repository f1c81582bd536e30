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
