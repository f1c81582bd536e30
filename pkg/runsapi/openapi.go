package runsapi

import (
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// OpenAPITitle is info.title of the durable openapi.json.
const OpenAPITitle = "funcgraph durable runtime"

// OpenAPIDocument is the minimal hand-built OpenAPI 3.0.3 document of the runs API.
// It marshals with the contract's key order: openapi, info, paths, components. The documented
// paths carry summaries and path parameters only; request and response shapes are described
// by extra entries of components.schemas, after RegisteredGraphs (which keeps the original's
// vendor key x-afdg-graphs with one manifest fragment per graph).
type OpenAPIDocument struct {
	OpenAPI    string                `json:"openapi"`
	Info       OpenAPIInfo           `json:"info"`
	Paths      durable.OrderedObject `json:"paths"`
	Components OpenAPIComponents     `json:"components"`
}

// OpenAPIInfo is the document's info object.
type OpenAPIInfo struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

// OpenAPIComponents holds components.schemas.
type OpenAPIComponents struct {
	Schemas durable.OrderedObject `json:"schemas"`
}

// OpenAPIOperation is one operation: a summary and its path parameters.
type OpenAPIOperation struct {
	Summary    string             `json:"summary"`
	Parameters []OpenAPIParameter `json:"parameters,omitempty"`
}

// OpenAPIParameter is a required string path parameter.
type OpenAPIParameter struct {
	Name     string        `json:"name"`
	In       string        `json:"in"`
	Required bool          `json:"required"`
	Schema   OpenAPISchema `json:"schema"`
}

// OpenAPISchema is the {"type": ...} schema of a parameter.
type OpenAPISchema struct {
	Type string `json:"type"`
}

// RegisteredGraphsSchema is components.schemas.RegisteredGraphs.
type RegisteredGraphsSchema struct {
	Type   string                     `json:"type"`
	Items  OpenAPISchema              `json:"items"`
	Graphs []durable.ManifestFragment `json:"x-afdg-graphs"`
}

func oasPathParam(name string) OpenAPIParameter {
	return OpenAPIParameter{Name: name, In: "path", Required: true, Schema: OpenAPISchema{Type: "string"}}
}

// OpenAPIDocument returns the document served at GET /api/openapi.json, listing the latest
// registration of every graph.
func (s *Service) OpenAPIDocument() OpenAPIDocument {
	prefix := "/" + strings.Trim(s.opts.RoutePrefix, "/")
	if prefix == "/" {
		prefix = ""
	}
	id, event, graph := oasPathParam("instance_id"), oasPathParam("event_name"), oasPathParam("graph_name")
	op := func(method string, o OpenAPIOperation) durable.OrderedObject {
		return durable.OrderedObject{{Key: method, Value: o}}
	}
	return OpenAPIDocument{
		OpenAPI: "3.0.3",
		Info:    OpenAPIInfo{Title: OpenAPITitle, Version: s.opts.Version},
		Paths: durable.OrderedObject{
			{Key: prefix + "/graphs/{graph_name}/runs", Value: op("post", OpenAPIOperation{"Start a graph run", []OpenAPIParameter{graph}})},
			{Key: prefix + "/runs/{instance_id}", Value: op("get", OpenAPIOperation{"Get run status", []OpenAPIParameter{id}})},
			{Key: prefix + "/runs/{instance_id}/events/{event_name}", Value: op("post", OpenAPIOperation{"Raise an external event", []OpenAPIParameter{id, event}})},
			{Key: prefix + "/runs/{instance_id}/cancel", Value: op("post", OpenAPIOperation{"Terminate a run", []OpenAPIParameter{id}})},
			{Key: prefix + "/health", Value: op("get", OpenAPIOperation{Summary: "Health"})},
		},
		Components: OpenAPIComponents{Schemas: append(durable.OrderedObject{
			{Key: "RegisteredGraphs", Value: s.registeredGraphs()},
		}, oasBodySchemas()...)},
	}
}
