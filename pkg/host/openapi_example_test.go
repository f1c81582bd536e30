package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/host"
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
