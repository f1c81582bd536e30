package runsapi

import "github.com/funcgraph/funcgraph/pkg/durable"

// JSON Schemas of the request and response bodies, listed in openapi.json after
// RegisteredGraphs. They document; they never affect serving.

type oasSchema = map[string]any

func oasObj(required []string, props durable.OrderedObject) durable.OrderedObject {
	o := durable.OrderedObject{{Key: "type", Value: "object"}}
	if len(required) > 0 {
		o = append(o, durable.Member{Key: "required", Value: required})
	}
	return append(o, durable.Member{Key: "properties", Value: props})
}

func oasStr() oasSchema                 { return oasSchema{"type": "string"} }
func oasNullableStr() oasSchema         { return oasSchema{"type": "string", "nullable": true} }
func oasBoolean() oasSchema             { return oasSchema{"type": "boolean"} }
func oasRef(name string) oasSchema      { return oasSchema{"$ref": "#/components/schemas/" + name} }
func oasArrayOf(items any) oasSchema    { return oasSchema{"type": "array", "items": items} }
func oasAnyValue(desc string) oasSchema { return oasSchema{"description": desc, "nullable": true} }
func oasFreeObject(desc string) oasSchema {
	return oasSchema{"type": "object", "description": desc, "additionalProperties": true}
}

func oasBodySchemas() durable.OrderedObject {
	statuses := []string{"Pending", "Running", "Completed", "Failed", "Terminated"}
	runState := func(desc string) durable.OrderedObject {
		return oasObj([]string{"error", "instance_id", "runtime_status"}, durable.OrderedObject{
			{Key: "error", Value: oasSchema{"type": "string", "description": desc}},
			{Key: "instance_id", Value: oasStr()},
			{Key: "runtime_status", Value: oasRef("RuntimeStatus")},
		})
	}
	return durable.OrderedObject{
		{Key: "StartRunRequest", Value: oasObj(nil, durable.OrderedObject{
			{Key: "instance_id", Value: oasSchema{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^[ !"$-.0-9:->@-\[\]-~]+$`,
				"description": "Run id; absent or pyFalsy means a new UUID4. Printable ASCII without / \\ # ?."}},
			{Key: "input", Value: oasFreeObject("Initial state; pyFalsy means {}.")},
			{Key: "metadata", Value: oasFreeObject("Stored and echoed, never read; pyFalsy means {}.")},
		})},
		{Key: "ManagementPayload", Value: oasObj([]string{"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri"}, durable.OrderedObject{
			{Key: "id", Value: oasStr()}, {Key: "statusQueryGetUri", Value: oasStr()}, {Key: "sendEventPostUri", Value: oasStr()}, {Key: "terminatePostUri", Value: oasStr()},
		})},
		{Key: "RuntimeStatus", Value: oasSchema{"type": "string", "enum": statuses}},
		{Key: "RunInput", Value: oasObj([]string{"graph_name", "graph_hash", "initial_state", "current_node", "metadata"}, durable.OrderedObject{
			{Key: "graph_name", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()}, {Key: "initial_state", Value: oasFreeObject("The posted input.")},
			{Key: "current_node", Value: oasNullableStr()}, {Key: "metadata", Value: oasFreeObject("The posted metadata.")},
		})},
		{Key: "RunStatus", Value: oasObj([]string{"instance_id", "runtime_status", "custom_status", "input", "output"}, durable.OrderedObject{
			{Key: "instance_id", Value: oasStr()},
			{Key: "runtime_status", Value: oasRef("RuntimeStatus")},
			{Key: "custom_status", Value: oasAnyValue("null while Pending; {graph_name, graph_version, graph_hash, current_node}, plus waiting_for_event and resume_node while waiting.")},
			{Key: "input", Value: oasRef("RunInput")},
			{Key: "output", Value: oasAnyValue("{graph_name, graph_version, graph_hash, final_node, state} when Completed; the failure string when Failed; the reason when Terminated; else null.")},
		})},
		{Key: "EventAccepted", Value: oasObj([]string{"instance_id", "event_name", "accepted"}, durable.OrderedObject{
			{Key: "instance_id", Value: oasStr()}, {Key: "event_name", Value: oasStr()}, {Key: "accepted", Value: oasBoolean()},
		})},
		{Key: "CancelRequest", Value: oasObj(nil, durable.OrderedObject{{Key: "reason", Value: oasSchema{"type": "string", "default": DefaultCancelReason}}})},
		{Key: "CancelAccepted", Value: oasObj([]string{"instance_id", "terminated", "reason"}, durable.OrderedObject{
			{Key: "instance_id", Value: oasStr()}, {Key: "terminated", Value: oasBoolean()}, {Key: "reason", Value: oasStr()},
		})},
		{Key: "RunSummary", Value: oasObj([]string{"instance_id", "runtime_status", "graph_name", "graph_version", "graph_hash", "created_at", "last_updated_at"}, durable.OrderedObject{
			{Key: "instance_id", Value: oasStr()}, {Key: "runtime_status", Value: oasRef("RuntimeStatus")}, {Key: "graph_name", Value: oasStr()},
			{Key: "graph_version", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()},
			{Key: "created_at", Value: oasSchema{"type": "string", "format": "date-time"}}, {Key: "last_updated_at", Value: oasSchema{"type": "string", "format": "date-time"}},
		})},
		{Key: "RunList", Value: oasObj([]string{"runs", "continuation_token"}, durable.OrderedObject{
			{Key: "runs", Value: oasArrayOf(oasRef("RunSummary"))}, {Key: "continuation_token", Value: oasNullableStr()},
		})},
		{Key: "HistoryEvent", Value: oasObj([]string{"sequence", "type", "name", "node", "timestamp", "data"}, durable.OrderedObject{
			{Key: "sequence", Value: oasSchema{"type": "integer"}}, {Key: "type", Value: oasStr()}, {Key: "name", Value: oasNullableStr()}, {Key: "node", Value: oasNullableStr()},
			{Key: "timestamp", Value: oasSchema{"type": "string", "format": "date-time"}}, {Key: "data", Value: oasAnyValue("Event data.")},
		})},
		{Key: "RunHistory", Value: oasObj([]string{"instance_id", "events", "continuation_token"}, durable.OrderedObject{
			{Key: "instance_id", Value: oasStr()}, {Key: "events", Value: oasArrayOf(oasRef("HistoryEvent"))}, {Key: "continuation_token", Value: oasNullableStr()},
		})},
		{Key: "RunPurged", Value: oasObj([]string{"instance_id", "purged"}, durable.OrderedObject{{Key: "instance_id", Value: oasStr()}, {Key: "purged", Value: oasBoolean()}})},
		{Key: "DurableHealthResponse", Value: oasObj([]string{"ok", "registered_graphs"}, durable.OrderedObject{
			{Key: "ok", Value: oasBoolean()}, {Key: "registered_graphs", Value: oasArrayOf(oasRef("ManifestFragment"))},
		})},
		{Key: "ManifestFragment", Value: oasObj([]string{"graph_name", "version", "graph_hash", "entrypoint", "state_model_name", "nodes", "events"}, durable.OrderedObject{
			{Key: "graph_name", Value: oasStr()}, {Key: "version", Value: oasStr()}, {Key: "graph_hash", Value: oasStr()}, {Key: "entrypoint", Value: oasStr()},
			{Key: "state_model_name", Value: oasStr()}, {Key: "nodes", Value: oasArrayOf(oasStr())}, {Key: "events", Value: oasArrayOf(oasStr())},
		})},
		{Key: "RunError", Value: oasObj([]string{"error"}, durable.OrderedObject{{Key: "error", Value: oasStr()}})},
		{Key: "RunConflict", Value: runState("instance already exists | instance is not running | instance is still active")},
	}
}
