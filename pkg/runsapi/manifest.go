package runsapi

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// Function names of the read-only graph routes, which show a client (the run inspector) what
// a run's graph looks like.
const (
	// funcListGraphs lists the durable graphs: GET /api/graphs.
	funcListGraphs = "list_graphs"
	// funcGetGraphManifest returns one version's manifest: GET /api/graphs/{graph_name}/manifest.
	funcGetGraphManifest = "get_graph_manifest"
)

// Response bodies of the graph routes, fields in wire order.
type (
	graphListBody struct {
		Graphs []manifestFragment `json:"graphs"`
	}
	// graphEventBody describes one event the graph takes; PayloadSchema is the JSON Schema of
	// a typed handler's payload (durable.OnEvent), null for an untyped one (any JSON value).
	graphEventBody struct {
		EventName     string          `json:"event_name"`
		Typed         bool            `json:"typed"`
		PayloadSchema *openapi.Schema `json:"payload_schema"`
	}
	graphManifestBody struct {
		GraphName string                `json:"graph_name"`
		Latest    bool                  `json:"latest"`
		Manifest  durable.GraphManifest `json:"manifest"`
		Events    []graphEventBody      `json:"events"`
	}
)

// manifestFunctions are the read-only graph routes.
func (s *Service) manifestFunctions(auth funchost.AuthLevel) []funchost.HTTPFunction {
	get := []string{http.MethodGet}
	return []funchost.HTTPFunction{
		{Name: funcListGraphs, Methods: get, Route: "graphs", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.listGraphs)), Doc: funchost.RouteDoc{Summary: "List the durable graphs", Tags: []string{"graphs"},
				Description: "The latest registration of every durable graph: name, version, hash, entrypoint, state model, nodes and events.",
				Response:    oasFreeObject(`{"graphs": [RegisteredGraphs item...]}`)}},
		{Name: funcGetGraphManifest, Methods: get, Route: "graphs/{graph_name}/manifest", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.getManifest)), Doc: funchost.RouteDoc{Summary: "Get a graph version's manifest", Tags: []string{"graphs"},
				Description: "Query: graph_hash (16 lowercase hex digits; absent: the latest registration). The manifest (nodes with their static next node, route handler and terminal flag; events) and, per event, the JSON Schema of a typed handler's payload.",
				Response:    oasFreeObject(`{"graph_name", "latest", "manifest", "events": [{"event_name", "typed", "payload_schema"}]}`), Errors: routeErrors(400, 404)}},
	}
}

// listGraphs serves GET /api/graphs: the public fragment of every durable graph.
func (s *Service) listGraphs(w http.ResponseWriter, _ *http.Request) error {
	apiWriteJSON(w, http.StatusOK, graphListBody{Graphs: fragments(s.reg)}, s.logger)
	return nil
}

// getManifest serves GET /api/graphs/{graph_name}/manifest[?graph_hash=]: the manifest of the
// registered version graph_hash, else of the latest. Internal graphs, unknown names and hashes
// this process has not registered are 404.
func (s *Service) getManifest(w http.ResponseWriter, r *http.Request) error {
	name, hash := r.PathValue("graph_name"), r.URL.Query().Get("graph_hash")
	if hash != "" && !validGraphHash(hash) {
		return &apiQueryError{"graph_hash", "want 16 lowercase hexadecimal digits"}
	}
	if s.reg.Internal(name) {
		return &graphNotFoundError{name: name}
	}
	latest, err := s.reg.Latest(name)
	if err != nil {
		return graphLookupError(name, err)
	}
	g := latest
	if hash != "" {
		if g, err = s.reg.Lookup(name, hash); err != nil {
			return &graphNotFoundError{name: name, hash: hash}
		}
	}
	m := g.Manifest()
	out := graphManifestBody{GraphName: name, Latest: m.GraphHash == latest.Manifest().GraphHash, Manifest: m, Events: make([]graphEventBody, 0, len(m.EventHandlerNames))}
	typer, _ := graphrun.Of(g).(graphrun.EventPayloadTyper[durable.EventPayload])
	for _, event := range m.EventHandlerNames {
		e := graphEventBody{EventName: event}
		if typer != nil {
			if p, ok := typer.EventPayload(event); ok {
				e.Typed, e.PayloadSchema = true, payloadSchema(p)
			}
		}
		out.Events = append(out.Events, e)
	}
	apiWriteJSON(w, http.StatusOK, out, s.logger)
	return nil
}

// payloadSchema is the JSON Schema of a typed event payload. Its required fields are the
// durable rule's (`durable:"required"`), not encoding/json's.
func payloadSchema(p durable.EventPayload) *openapi.Schema {
	schema := openapi.SchemaOf(p.Type)
	if schema.Type == "object" && schema.Properties != nil {
		schema.Required = p.Required
	}
	return schema
}
