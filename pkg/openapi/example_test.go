package openapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/openapi"
)

func ExampleSchemaOf() {
	type Input struct {
		Text  string   `json:"text"`
		Limit *int     `json:"limit,omitempty"`
		Tags  []string `json:"tags"`
	}
	b, _ := json.Marshal(openapi.SchemaOf(reflect.TypeFor[Input]()))
	fmt.Println(string(b))
	// Output:
	// {"type":"object","properties":{"text":{"type":"string"},"limit":{"type":"integer","format":"int64","nullable":true},"tags":{"type":"array","items":{"type":"string"}}},"required":["text","tags"]}
}

// A document marshals with its paths and schemas in the order they were added.
func ExampleDocument() {
	doc := &openapi.Document{Title: "demo", Version: "1.0.0"}
	doc.AddPath("/api/runs/{instance_id}", "GET", openapi.Operation{
		Summary: "Get run status", Parameters: []openapi.Parameter{openapi.PathParameter("instance_id")}})
	doc.AddSchema("RunError", openapi.Object{
		{Key: "type", Value: "object"},
		{Key: "properties", Value: openapi.Object{{Key: "error", Value: &openapi.Schema{Type: "string"}}}},
	})
	b, _ := json.Marshal(doc)
	fmt.Println(string(b))
	// Output:
	// {"openapi":"3.0.3","info":{"title":"demo","version":"1.0.0"},"paths":{"/api/runs/{instance_id}":{"get":{"summary":"Get run status","parameters":[{"name":"instance_id","in":"path","required":true,"schema":{"type":"string"}}]}}},"components":{"schemas":{"RunError":{"type":"object","properties":{"error":{"type":"string"}}}}}}
}
