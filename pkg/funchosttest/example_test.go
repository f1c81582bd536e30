package funchosttest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// ExampleStart runs a funchost app behind the emulator from an app root on disk.
func ExampleStart() {
	app := funchost.NewFunctionApp()
	_ = app.HandleHTTP(funchost.HTTPFunction{Name: "hello", Route: "hello/{name}", AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "hello %s", r.PathValue("name"))
		})})
	root, _ := os.MkdirTemp("", "funchosttest-example-")
	defer os.RemoveAll(root)
	_ = app.WriteFunctions(root)
	_ = funchosttest.WriteHostJSON(root, app.RoutePrefix())

	e, err := funchosttest.Start(context.Background(), funchosttest.Options{
		AppRoot: root,
		Handler: app.CustomHandler(funchost.HandlerOptions{}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	resp, err := http.Get(e.URL() + "/api/hello/world")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello world
}

// ExampleEmulator_DrainQueues delivers queue messages to a queue-triggered function.
func ExampleEmulator_DrainQueues() {
	root, _ := os.MkdirTemp("", "funchosttest-example-")
	defer os.RemoveAll(root)
	_ = funchosttest.WriteHostJSON(root, "api")
	_ = os.MkdirAll(filepath.Join(root, "worker"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "worker", "function.json"),
		[]byte(`{"bindings":[{"name":"msg","type":"queueTrigger","direction":"in","queueName":"jobs"}]}`), 0o644)
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			w.WriteHeader(http.StatusInternalServerError) // every invocation fails
		}
	})
	e, err := funchosttest.Start(context.Background(), funchosttest.Options{AppRoot: root, Handler: failing})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	e.EnqueueBase64("jobs", "job 1")
	_ = e.DrainQueues(context.Background())
	fmt.Println(e.Queue("jobs"), e.QueueContents("jobs-poison"))
	// Output: [] [job 1]
}

// ExampleCheckPublishFolder reads a folder as `func azure functionapp publish` and the host
// would: this one lacks the worker runtime and the executable host.json names.
func ExampleCheckPublishFolder() {
	root, _ := os.MkdirTemp("", "funchosttest-example-")
	defer os.RemoveAll(root)
	_ = funchosttest.WriteHostJSON(root, "api")
	_ = os.MkdirAll(filepath.Join(root, "hello"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "hello", "function.json"),
		[]byte(`{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"},{"type":"http","direction":"out","name":"res"}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(root, "local.settings.json"), []byte(`{"IsEncrypted": false, "Values": {}}`), 0o644)
	problems := funchosttest.CheckPublishFolder(root, []string{"hello"})
	fmt.Println(len(problems), "problems:")
	fmt.Println(problems[0])
	fmt.Println(strings.HasPrefix(problems[1], `defaultExecutablePath "handler" is not in the folder`))
	// Output:
	// 2 problems:
	// FUNCTIONS_WORKER_RUNTIME is "", want custom: Core Tools stops before uploading
	// true
}
