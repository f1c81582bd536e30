package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// OpenAPI builds the document GET /api/openapi.json serves, from the app's routes; code
// generators and API gateways can read it without running the server.
func ExampleGraphHostApp_OpenAPI() {
	app, _ := host.New(host.Options{})
	echo := host.InvokeFunc(func(_ context.Context, req host.Request) (any, error) { return req.Input, nil })
	_ = app.Register(echo, "echo", host.RegisterOptions{Description: "Echoes its input.", NoStream: true})

	raw, err := json.Marshal(app.OpenAPI())
	if err != nil {
		fmt.Println(err)
		return
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	_ = json.Unmarshal(raw, &doc)
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		for method, op := range doc.Paths[path] {
			fmt.Println(method, path, op.OperationID)
		}
	}
	// Output:
	// post /api/graphs/echo/invoke fg_echo_invoke
	// get /api/health fg_health
	// get /api/health/details fg_health_details
}

// A surface mounted on the app (the runs API does) extends the document at every request.
func ExampleGraphHostApp_AddOpenAPI() {
	app, _ := host.New(host.Options{})
	app.AddOpenAPI(func(doc *openapi.Document) {
		doc.AddSchema("Greeting", openapi.SchemaOf(reflect.TypeFor[struct {
			Text string `json:"text"`
		}]()))
	})
	raw, _ := json.Marshal(app.OpenAPI())
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	_ = json.Unmarshal(raw, &doc)
	fmt.Println(string(doc.Components.Schemas["Greeting"]))
	// Output:
	// {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}
}
