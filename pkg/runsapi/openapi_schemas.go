package runsapi

import (
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// JSON Schemas of the request and response bodies, listed in openapi.json after
// RegisteredGraphs. They document; they never affect serving.

// oasSchema is a hand-written schema: its keys are written sorted.
type oasSchema = map[string]any

func oasObj(required []string, props openapi.Object) openapi.Object {
	o := openapi.Object{{Key: "type", Value: "object"}}
	if len(required) > 0 {
		o = append(o, openapi.Member{Key: "required", Value: required})
	}
	return append(o, openapi.Member{Key: "properties", Value: props})
}

func oasStr() oasSchema                 { return oasSchema{"type": "string"} }
func oasNullableStr() oasSchema         { return oasSchema{"type": "string", "nullable": true} }
func oasBoolean() oasSchema             { return oasSchema{"type": "boolean"} }
func oasArrayOf(items any) oasSchema    { return oasSchema{"type": "array", "items": items} }
func oasAnyValue(desc string) oasSchema { return oasSchema{"description": desc, "nullable": true} }
func oasFreeObject(desc string) oasSchema {
	return oasSchema{"type": "object", "description": desc, "additionalProperties": true}
}

// bodySchemas are the schemas of the request and response bodies, listed in openapi.json
// after RegisteredGraphs.
func bodySchemas() openapi.Object {
	statuses := []string{"Pending", "Running", "Completed", "Failed", "Terminated"}
	runState := func(desc string, more ...openapi.Member) openapi.Object {
		return oasObj([]string{"error", "instance_id", "runtime_status"}, append(openapi.Object{
			{Key: "error", Value: oasSchema{"type": "string", "description": desc}},
			{Key: "instance_id", Value: oasStr()},
			{Key: "runtime_status", Value: openapi.Ref("RuntimeStatus")},
		}, more...))
	}
	return append(openapi.Object{
		{Key: "StartRunRequest", Value: oasObj(nil, openapi.Object{
			{Key: "instance_id", Value: oasSchema{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^[ !"$-.0-9:->@-\[\]-~]+$`,
				"description": "Run id: 1 to 256 printable ASCII characters without / \\ # ?, not \".\" or \"..\". Absent, null or empty means a new random id."}},
			{Key: "input", Value: oasFreeObject("Initial state of the run, validated against the graph's state model (see RunInput_<graph_name>). Absent, null or empty means {}.")},
			{Key: "metadata", Value: oasFreeObject("Kept with the run and returned with its status; absent, null or empty means {}.")},
			{Key: "search_keys", Value: oasSchema{"type": "object", "maxProperties": engine.MaxSearchKeys, "additionalProperties": oasSchema{"type": "string", "minLength": 1, "maxLength": engine.MaxSearchKeyValueBytes},
				"description": "Keys the run is found by (GET /api/runs?key.<name>=<value>), besides those the graph declares, whose values they replace: names of 1 to 64 letters, digits, '_', '-' or '.'; values of 1 to 256 bytes (a number is kept as its JSON text); at most 8 in all."}},
		})},
		{Key: "ManagementPayload", Value: oasObj([]string{"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri"}, openapi.Object{
			{Key: "id", Value: oasStr()}, {Key: "statusQueryGetUri", Value: oasStr()}, {Key: "sendEventPostUri", Value: oasStr()}, {Key: "terminatePostUri", Value: oasStr()},
		})},
		{Key: "RuntimeStatus", Value: oasSchema{"type": "string", "enum": statuses}},
		{Key: "RunInput", Value: oasObj([]string{"graph_name", "graph_hash", "initial_state", "current_node", "metadata"}, openapi.Object{
			{Key: "graph_name", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()}, {Key: "initial_state", Value: oasFreeObject("The posted input.")},
			{Key: "current_node", Value: oasNullableStr()}, {Key: "metadata", Value: oasFreeObject("The posted metadata.")},
		})},
		{Key: "RunStatus", Value: oasObj([]string{"instance_id", "runtime_status", "custom_status", "input", "output"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()},
			{Key: "runtime_status", Value: openapi.Ref("RuntimeStatus")},
			{Key: "custom_status", Value: oasAnyValue("null while Pending; {graph_name, graph_version, graph_hash, current_node}, plus waiting_for_event and resume_node while waiting for an event, or waiting_for_child and resume_node while waiting for a child run; plus waiting_for_version (the graph hash) and message, Pending included, while the run's graph version is not registered on the process that picked it up.")},
			{Key: "input", Value: openapi.Ref("RunInput")},
			{Key: "output", Value: oasAnyValue("{graph_name, graph_version, graph_hash, final_node, state} when Completed; the failure string when Failed; the reason when Terminated; else null.")},
			{Key: "parent_instance_id", Value: oasSchema{"type": "string", "description": "The run that started this one as its child run; absent for a run started otherwise."}},
			{Key: "child_instance_ids", Value: oasSchema{"type": "array", "items": oasStr(),
				"description": "The child runs this run started, oldest first (at most 100; the history names every one); absent when it started none."}},
			{Key: "search_keys", Value: oasSchema{"type": "object", "additionalProperties": oasStr(),
				"description": "The run's search keys, name to value (the graph's declared ones and the start's); absent when it has none."}},
			{Key: "sleeping_until", Value: oasSchema{"type": "string", "format": "date-time",
				"description": "When a Running run's durable sleep ends (its next node runs from then on); absent when it does not sleep."}},
			{Key: "node_retry", Value: oasObj([]string{"attempt", "retry_at"}, openapi.Object{
				{Key: "attempt", Value: oasSchema{"type": "integer", "minimum": 2, "description": "The number of the next attempt (2: the first retry)."}},
				{Key: "retry_at", Value: oasSchema{"type": "string", "format": "date-time", "description": "When the retry policy's back-off ends."}},
			})},
			{Key: "branches_retrying", Value: oasSchema{"type": "array", "maxItems": engine.MaxListedBranchRetries,
				"description": "The branches of the run's open fan-out waiting to retry a failed attempt, by index (at most 100); absent when none.",
				"items": oasObj([]string{"index", "attempt", "retry_at"}, openapi.Object{
					{Key: "index", Value: oasSchema{"type": "integer", "minimum": 0, "description": "The branch's index in its fan-out."}},
					{Key: "attempt", Value: oasSchema{"type": "integer", "minimum": 2, "description": "The number of the branch's next attempt."}},
					{Key: "retry_at", Value: oasSchema{"type": "string", "format": "date-time", "description": "When its back-off ends."}},
				})}},
			{Key: "generation", Value: oasSchema{"type": "integer", "minimum": 1,
				"description": "How often the run continued as new (durable.ContinueAsNew); absent while it never has (generation 0)."}},
		})},
		{Key: "EventAccepted", Value: oasObj([]string{"instance_id", "event_name", "accepted"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()}, {Key: "event_name", Value: oasStr()}, {Key: "accepted", Value: oasBoolean()},
		})},
		{Key: "CancelRequest", Value: oasObj(nil, openapi.Object{{Key: "reason", Value: oasSchema{"type": "string", "default": DefaultCancelReason}}})},
		{Key: "CancelAccepted", Value: oasObj([]string{"instance_id", "terminated", "reason"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()}, {Key: "terminated", Value: oasBoolean()}, {Key: "reason", Value: oasStr()},
		})},
		{Key: "RunSummary", Value: oasObj([]string{"instance_id", "runtime_status", "graph_name", "graph_version", "graph_hash", "created_at", "last_updated_at"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()}, {Key: "runtime_status", Value: openapi.Ref("RuntimeStatus")}, {Key: "graph_name", Value: oasStr()},
			{Key: "graph_version", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()},
			{Key: "created_at", Value: oasSchema{"type": "string", "format": "date-time"}}, {Key: "last_updated_at", Value: oasSchema{"type": "string", "format": "date-time"}},
		})},
		{Key: "RunList", Value: oasObj([]string{"runs", "continuation_token"}, openapi.Object{
			{Key: "runs", Value: oasArrayOf(openapi.Ref("RunSummary"))}, {Key: "continuation_token", Value: oasNullableStr()},
		})},
		{Key: "HistoryEvent", Value: oasObj([]string{"sequence", "type", "name", "node", "timestamp", "data"}, openapi.Object{
			{Key: "sequence", Value: oasSchema{"type": "integer"}}, {Key: "type", Value: oasStr()}, {Key: "name", Value: oasNullableStr()}, {Key: "node", Value: oasNullableStr()},
			{Key: "timestamp", Value: oasSchema{"type": "string", "format": "date-time"}}, {Key: "data", Value: oasAnyValue("Event data.")},
		})},
		{Key: "RunHistory", Value: oasObj([]string{"instance_id", "events", "continuation_token"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()}, {Key: "events", Value: oasArrayOf(openapi.Ref("HistoryEvent"))}, {Key: "continuation_token", Value: oasNullableStr()},
		})},
		{Key: "FeedItem", Value: oasObj([]string{"seq", "type", "name", "node", "timestamp", "data"}, openapi.Object{
			{Key: "seq", Value: oasSchema{"type": "integer", "description": "The history row's sequence number: strictly increasing, possibly with gaps."}},
			{Key: "type", Value: oasSchema{"type": "string", "description": "A history row type, or custom for an event a node emitted (durable.Emit)."}},
			{Key: "name", Value: oasNullableStr()}, {Key: "node", Value: oasNullableStr()},
			{Key: "timestamp", Value: oasSchema{"type": "string", "format": "date-time"}},
			{Key: "data", Value: oasAnyValue("The row's data; {name, data} for a custom item.")},
		})},
		{Key: "RunFeed", Value: oasObj([]string{"instance_id", "runtime_status", "run", "items", "next_after"}, openapi.Object{
			{Key: "instance_id", Value: oasStr()}, {Key: "runtime_status", Value: openapi.Ref("RuntimeStatus")},
			{Key: "run", Value: oasSchema{"type": "string", "description": "The run of the id the answer is of (a new start of the id is another run): send it back as run with after."}},
			{Key: "items", Value: oasArrayOf(openapi.Ref("FeedItem"))},
			{Key: "next_after", Value: oasSchema{"type": "integer", "description": "The after of the next request. A finished run's feed has ended once an answer holds no items."}},
		})},
		{Key: "GraphVersions", Value: oasObj([]string{"graph_name", "versions"}, openapi.Object{
			{Key: "graph_name", Value: oasStr()},
			{Key: "versions", Value: oasArrayOf(oasObj([]string{"graph_hash", "graph_version", "registered", "latest", "unfinished_runs"}, openapi.Object{
				{Key: "graph_hash", Value: oasStr()}, {Key: "graph_version", Value: oasStr()},
				{Key: "registered", Value: oasSchema{"type": "boolean", "description": "Registered on the process that answered."}},
				{Key: "latest", Value: oasSchema{"type": "boolean", "description": "The version new runs start on."}},
				{Key: "unfinished_runs", Value: oasSchema{"type": "integer", "description": "Pending or Running runs pinned to this version."}},
			}))},
		})},
		{Key: "RunPurged", Value: oasObj([]string{"instance_id", "purged"}, openapi.Object{{Key: "instance_id", Value: oasStr()}, {Key: "purged", Value: oasBoolean()}})},
		{Key: "DurableHealthResponse", Value: oasObj([]string{"ok", "registered_graphs"}, openapi.Object{
			{Key: "ok", Value: oasBoolean()}, {Key: "registered_graphs", Value: oasArrayOf(openapi.Ref("ManifestFragment"))},
		})},
		{Key: "ManifestFragment", Value: oasObj([]string{"graph_name", "version", "graph_hash", "entrypoint", "state_model_name", "nodes", "events"}, openapi.Object{
			{Key: "graph_name", Value: oasStr()}, {Key: "version", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()}, {Key: "entrypoint", Value: oasStr()},
			{Key: "state_model_name", Value: oasStr()}, {Key: "nodes", Value: oasArrayOf(oasStr())}, {Key: "events", Value: oasArrayOf(oasStr())},
		})},
		{Key: "RunError", Value: oasObj([]string{"error"}, openapi.Object{{Key: "error", Value: oasStr()}})},
		runStateSchema(),
		{Key: "RunConflict", Value: runState("instance already exists | instance is not running | instance is still active | instance is awaited by its parent run | run '<id>' is <runtime_status>; only a Failed run can be rewound",
			openapi.Member{Key: "parent_instance_id", Value: oasSchema{"type": "string", "description": "With 'instance is awaited by its parent run': the parent run that has not read the child's result yet."}})},
	}, rewindSchemas()...) // rewind.go
}

// routeErrors documents the error statuses of a run route with their bodies.
func routeErrors(statuses ...int) []funchost.RouteError {
	out := make([]funchost.RouteError, 0, len(statuses))
	for _, s := range statuses {
		e := funchost.RouteError{Status: s, Schema: openapi.Ref("RunError")}
		switch s {
		case 400:
			e.Description = "Invalid body, instance id or query parameter"
		case 404:
			e.Description = "Unknown graph or run"
		case 409:
			e.Description = "The run exists and is not finished (start), is finished (event, cancel), is still active (purge) or is not Failed (rewind)"
			e.Schema = openapi.Ref("RunConflict")
		case 413:
			e.Description = "Request body too large"
		case 503:
			e.Description = "The run is busy with other writers; nothing was written, retry after Retry-After seconds"
		}
		out = append(out, e)
	}
	return out
}

// stater is implemented by graphs built with durable.ManifestBuilder: their state model.
type stater interface{ StateType() reflect.Type }

// runInputSchemaName is the components.schemas name of a graph's run input schema.
func runInputSchemaName(graph string) string { return "RunInput_" + graph }

// openAPISchemas returns the components.schemas entries of the service for the hosting app's
// document (Mount adds them): RegisteredGraphs with the vendor key x-afdg-graphs, as in the
// service's own document, the request and response bodies, then one run input schema per
// public registered graph with a Go state model (runInputSchemaName).
func (s *Service) openAPISchemas() openapi.Object {
	out := openapi.Object{{Key: "RegisteredGraphs", Value: s.registeredGraphs()}}
	out = append(out, bodySchemas()...)
	return append(out, s.graphInputSchemas()...)
}

// registeredGraphs is components.schemas.RegisteredGraphs.
func (s *Service) registeredGraphs() registeredGraphsSchema {
	return registeredGraphsSchema{Type: "array", Items: &openapi.Schema{Type: "object"}, Graphs: fragments(s.reg)}
}

// graphInputSchemas returns one JSON Schema per registered graph with a Go state model,
// generated from the state struct, by schema name.
func (s *Service) graphInputSchemas() openapi.Object {
	var out openapi.Object
	for _, g := range s.reg.Public() {
		st, ok := g.(stater)
		if !ok {
			continue
		}
		out = append(out, openapi.Member{Key: runInputSchemaName(g.Manifest().GraphName), Value: openapi.SchemaOf(st.StateType())})
	}
	return out
}
