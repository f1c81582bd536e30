package inspector_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/inspector"
)

// The page is one function next to the runs API, at its auth level (runsapi.Mount adds it).
func ExampleFunction() {
	app := funchost.NewFunctionApp()
	_ = app.HandleHTTP(inspector.Function(funchost.AuthAnonymous))
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/inspector")
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("Content-Type"))
	// Output: 200 text/html; charset=utf-8
}

// Build assembles the embedded files into the one document the handler serves.
func ExampleBuild() {
	p, err := inspector.Build()
	fmt.Println(err == nil, len(p.HTML) > 0)
	// Output: true true
}
