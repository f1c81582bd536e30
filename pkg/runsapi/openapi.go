package runsapi

import (
	"strings"

	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// openAPITitle is info.title of the durable openapi.json.
const openAPITitle = "funcgraph durable runtime"

// registeredGraphsSchema is components.schemas.RegisteredGraphs: an array schema with the
// vendor key x-afdg-graphs (kept for its clients; parity: docs/lineage.md) holding one
// manifest fragment per graph.
type registeredGraphsSchema struct {
	Type   string             `json:"type"`
	Items  *openapi.Schema    `json:"items"`
	Graphs []manifestFragment `json:"x-afdg-graphs"`
}

// openAPIDocument returns the document served at GET /api/openapi.json when the service
// runs alone: the contract's paths with their summaries and path parameters, and in
// components.schemas RegisteredGraphs (the latest registration of every graph) followed by
// the request and response bodies.
func (s *Service) openAPIDocument() *openapi.Document {
	prefix := "/" + strings.Trim(s.opts.RoutePrefix, "/")
	if prefix == "/" {
		prefix = ""
	}
	doc := &openapi.Document{Title: openAPITitle, Version: s.opts.Version}
	id, event, graph := openapi.PathParameter("instance_id"), openapi.PathParameter("event_name"), openapi.PathParameter("graph_name")
	for _, p := range []struct {
		path, method, summary string
		params                []openapi.Parameter
	}{
		{"/graphs/{graph_name}/runs", "post", "Start a graph run", []openapi.Parameter{graph}},
		{"/runs/{instance_id}", "get", "Get run status", []openapi.Parameter{id}},
		{"/runs/{instance_id}/events/{event_name}", "post", "Raise an external event", []openapi.Parameter{id, event}},
		{"/runs/{instance_id}/cancel", "post", "Terminate a run", []openapi.Parameter{id}},
		{"/health", "get", "Health", nil},
	} {
		doc.AddPath(prefix+p.path, p.method, openapi.Operation{Summary: p.summary, Parameters: p.params})
	}
	doc.AddSchema("RegisteredGraphs", s.registeredGraphs())
	for _, m := range bodySchemas() {
		doc.AddSchema(m.Key, m.Value)
	}
	return doc
}
