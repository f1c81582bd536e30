package durable

// JSON Schemas of the request and response bodies, listed in openapi.json after
// RegisteredGraphs. They document; they never affect serving.

type oasSchema = map[string]any

func oasObj(required []string, props OrderedObject) OrderedObject {
	o := OrderedObject{{"type", "object"}}
	if len(required) > 0 {
		o = append(o, Member{"required", required})
	}
	return append(o, Member{"properties", props})
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

func oasBodySchemas() OrderedObject {
	statuses := []string{"Pending", "Running", "Completed", "Failed", "Terminated"}
	runState := func(desc string) OrderedObject {
		return oasObj([]string{"error", "instance_id", "runtime_status"}, OrderedObject{
			{"error", oasSchema{"type": "string", "description": desc}},
			{"instance_id", oasStr()},
			{"runtime_status", oasRef("RuntimeStatus")},
		})
	}
	return OrderedObject{
		{"StartRunRequest", oasObj(nil, OrderedObject{
			{"instance_id", oasSchema{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^[ !"$-.0-9:->@-\[\]-~]+$`,
				"description": "Run id; absent or pyFalsy means a new UUID4. Printable ASCII without / \\ # ?."}},
			{"input", oasFreeObject("Initial state; pyFalsy means {}.")},
			{"metadata", oasFreeObject("Stored and echoed, never read; pyFalsy means {}.")},
		})},
		{"ManagementPayload", oasObj([]string{"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri"}, OrderedObject{
			{"id", oasStr()}, {"statusQueryGetUri", oasStr()}, {"sendEventPostUri", oasStr()}, {"terminatePostUri", oasStr()},
		})},
		{"RuntimeStatus", oasSchema{"type": "string", "enum": statuses}},
		{"RunInput", oasObj([]string{"graph_name", "graph_hash", "initial_state", "current_node", "metadata"}, OrderedObject{
			{"graph_name", oasStr()}, {"graph_hash", oasStr()}, {"initial_state", oasFreeObject("The posted input.")},
			{"current_node", oasNullableStr()}, {"metadata", oasFreeObject("The posted metadata.")},
		})},
		{"RunStatus", oasObj([]string{"instance_id", "runtime_status", "custom_status", "input", "output"}, OrderedObject{
			{"instance_id", oasStr()},
			{"runtime_status", oasRef("RuntimeStatus")},
			{"custom_status", oasAnyValue("null while Pending; {graph_name, graph_version, graph_hash, current_node}, plus waiting_for_event and resume_node while waiting.")},
			{"input", oasRef("RunInput")},
			{"output", oasAnyValue("{graph_name, graph_version, graph_hash, final_node, state} when Completed; the failure string when Failed; the reason when Terminated; else null.")},
		})},
		{"EventAccepted", oasObj([]string{"instance_id", "event_name", "accepted"}, OrderedObject{
			{"instance_id", oasStr()}, {"event_name", oasStr()}, {"accepted", oasBoolean()},
		})},
		{"CancelRequest", oasObj(nil, OrderedObject{{"reason", oasSchema{"type": "string", "default": DefaultCancelReason}}})},
		{"CancelAccepted", oasObj([]string{"instance_id", "terminated", "reason"}, OrderedObject{
			{"instance_id", oasStr()}, {"terminated", oasBoolean()}, {"reason", oasStr()},
		})},
		{"RunSummary", oasObj([]string{"instance_id", "runtime_status", "graph_name", "graph_version", "graph_hash", "created_at", "last_updated_at"}, OrderedObject{
			{"instance_id", oasStr()}, {"runtime_status", oasRef("RuntimeStatus")}, {"graph_name", oasStr()},
			{"graph_version", oasStr()}, {"graph_hash", oasStr()},
			{"created_at", oasSchema{"type": "string", "format": "date-time"}}, {"last_updated_at", oasSchema{"type": "string", "format": "date-time"}},
		})},
		{"RunList", oasObj([]string{"runs", "continuation_token"}, OrderedObject{
			{"runs", oasArrayOf(oasRef("RunSummary"))}, {"continuation_token", oasNullableStr()},
		})},
		{"HistoryEvent", oasObj([]string{"sequence", "type", "name", "node", "timestamp", "data"}, OrderedObject{
			{"sequence", oasSchema{"type": "integer"}}, {"type", oasStr()}, {"name", oasNullableStr()}, {"node", oasNullableStr()},
			{"timestamp", oasSchema{"type": "string", "format": "date-time"}}, {"data", oasAnyValue("Event data.")},
		})},
		{"RunHistory", oasObj([]string{"instance_id", "events", "continuation_token"}, OrderedObject{
			{"instance_id", oasStr()}, {"events", oasArrayOf(oasRef("HistoryEvent"))}, {"continuation_token", oasNullableStr()},
		})},
		{"RunPurged", oasObj([]string{"instance_id", "purged"}, OrderedObject{{"instance_id", oasStr()}, {"purged", oasBoolean()}})},
		{"DurableHealthResponse", oasObj([]string{"ok", "registered_graphs"}, OrderedObject{
			{"ok", oasBoolean()}, {"registered_graphs", oasArrayOf(oasRef("ManifestFragment"))},
		})},
		{"ManifestFragment", oasObj([]string{"graph_name", "version", "graph_hash", "entrypoint", "state_model_name", "nodes", "events"}, OrderedObject{
			{"graph_name", oasStr()}, {"version", oasStr()}, {"graph_hash", oasStr()}, {"entrypoint", oasStr()},
			{"state_model_name", oasStr()}, {"nodes", oasArrayOf(oasStr())}, {"events", oasArrayOf(oasStr())},
		})},
		{"RunError", oasObj([]string{"error"}, OrderedObject{{"error", oasStr()}})},
		{"RunConflict", runState("instance already exists | instance is not running | instance is still active")},
	}
}
