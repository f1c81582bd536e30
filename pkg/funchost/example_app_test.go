package funchost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// An app with one HTTP function, served directly by the standalone server: the route prefix
// is "api", and the route parameter reaches the handler through PathValue.
func ExampleNewFunctionApp() {
	app := funchost.NewFunctionApp()
	err := app.HandleHTTP(funchost.HTTPFunction{
		Name:      "hello",
		Methods:   []string{http.MethodGet},
		Route:     "hello/{name}",
		AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello, %s", r.PathValue("name"))
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{}))
	defer srv.Close()

	res, err := http.Get(srv.URL + "/api/hello/ada")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 hello, ada
}

// Two packages each build their own FunctionApp; Mount combines them into the one the binary
// serves. A clash of names or routes is refused like registering it twice.
func ExampleFunctionApp_Mount() {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})
	orders := funchost.NewFunctionApp()
	_ = orders.HandleHTTP(funchost.HTTPFunction{Name: "list_orders", Methods: []string{"GET"}, Route: "orders", Handler: ok})
	billing := funchost.NewFunctionApp()
	_ = billing.HandleHTTP(funchost.HTTPFunction{Name: "list_invoices", Methods: []string{"GET"}, Route: "invoices", Handler: ok})

	app := funchost.NewFunctionApp()
	if err := app.Mount(orders); err != nil {
		fmt.Println(err)
		return
	}
	if err := app.Mount(billing); err != nil {
		fmt.Println(err)
		return
	}
	for _, fn := range app.HTTPFunctions() {
		fmt.Println(fn.Name, fn.Route)
	}
	fmt.Println(app.Mount(orders) != nil)
	// Output:
	// list_invoices invoices
	// list_orders orders
	// true
}

// The custom handler the Functions host calls: each invocation is a POST /{FunctionName} with
// the caller's request inside, answered with the http output binding.
func ExampleFunctionApp_CustomHandler() {
	app := funchost.NewFunctionApp()
	_ = app.HandleHTTP(funchost.HTTPFunction{Name: "ping", Methods: []string{"GET"}, AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "pong") })})
	h := app.CustomHandler(funchost.HandlerOptions{Logger: slog.New(slog.DiscardHandler)})

	invocation := `{"Data": {"req": {"Url": "http://localhost:7071/api/ping", "Method": "GET", "Query": "{}", "Headers": {}, "Params": {}}},` +
		` "Metadata": {"sys": {"MethodName": "ping"}}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ping", strings.NewReader(invocation)))
	fmt.Println(rec.Code, rec.Body.String())
	// Output: 200 {"Outputs":{"res":{"statusCode":200,"headers":{"Content-Type":"text/plain; charset=utf-8"},"body":"pong"}},"Logs":[],"ReturnValue":null}
}

// A queue-triggered function: the host delivers each message of the queue "orders" on the
// AzureWebJobsStorage account; an error fails the invocation so the host retries it.
func ExampleFunctionApp_HandleQueue() {
	app := funchost.NewFunctionApp()
	err := app.HandleQueue(funchost.QueueFunction{
		Name:      "ship_order",
		QueueName: "orders",
		Handler: func(ctx context.Context, msg funchost.QueueMessage) (funchost.Outputs, error) {
			return nil, nil // ship the order in msg
		},
	})
	fmt.Println(err, len(app.QueueFunctions()))
	// Output: <nil> 1
}
