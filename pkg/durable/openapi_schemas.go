package durable

// JSON Schemas of the request and response bodies, listed in openapi.json after
// RegisteredGraphs. They document; they never affect serving.

type schema = map[string]any

func obj(required []string, props OrderedObject) OrderedObject {
	o := OrderedObject{{"type", "object"}}
	if len(required) > 0 {
		o = append(o, Member{"required", required})
	}
	return append(o, Member{"properties", props})
}

func str() schema                 { return schema{"type": "string"} }
func nullableStr() schema         { return schema{"type": "string", "nullable": true} }
func boolean() schema             { return schema{"type": "boolean"} }
func ref(name string) schema      { return schema{"$ref": "#/components/schemas/" + name} }
func arrayOf(items any) schema    { return schema{"type": "array", "items": items} }
func anyValue(desc string) schema { return schema{"description": desc, "nullable": true} }
func freeObject(desc string) schema {
	return schema{"type": "object", "description": desc, "additionalProperties": true}
}

func bodySchemas() OrderedObject {
	statuses := []string{"Pending", "Running", "Completed", "Failed", "Terminated"}
	runState := func(desc string) OrderedObject {
		return obj([]string{"error", "instance_id", "runtime_status"}, OrderedObject{
			{"error", schema{"type": "string", "description": desc}},
			{"instance_id", str()},
			{"runtime_status", ref("RuntimeStatus")},
		})
	}
	return OrderedObject{
		{"StartRunRequest", obj(nil, OrderedObject{
			{"instance_id", schema{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^[ !"$-.0-9:->@-\[\]-~]+$`,
				"description": "Run id; absent or falsy means a new UUID4. Printable ASCII without / \\ # ?."}},
			{"input", freeObject("Initial state; falsy means {}.")},
			{"metadata", freeObject("Stored and echoed, never read; falsy means {}.")},
		})},
		{"ManagementPayload", obj([]string{"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri"}, OrderedObject{
			{"id", str()}, {"statusQueryGetUri", str()}, {"sendEventPostUri", str()}, {"terminatePostUri", str()},
		})},
		{"RuntimeStatus", schema{"type": "string", "enum": statuses}},
		{"RunInput", obj([]string{"graph_name", "graph_hash", "initial_state", "current_node", "metadata"}, OrderedObject{
			{"graph_name", str()}, {"graph_hash", str()}, {"initial_state", freeObject("The posted input.")},
			{"current_node", nullableStr()}, {"metadata", freeObject("The posted metadata.")},
		})},
		{"RunStatus", obj([]string{"instance_id", "runtime_status", "custom_status", "input", "output"}, OrderedObject{
			{"instance_id", str()},
			{"runtime_status", ref("RuntimeStatus")},
			{"custom_status", anyValue("null while Pending; {graph_name, graph_version, graph_hash, current_node}, plus waiting_for_event and resume_node while waiting.")},
			{"input", ref("RunInput")},
			{"output", anyValue("{graph_name, graph_version, graph_hash, final_node, state} when Completed; the failure string when Failed; the reason when Terminated; else null.")},
		})},
		{"EventAccepted", obj([]string{"instance_id", "event_name", "accepted"}, OrderedObject{
			{"instance_id", str()}, {"event_name", str()}, {"accepted", boolean()},
		})},
		{"CancelRequest", obj(nil, OrderedObject{{"reason", schema{"type": "string", "default": DefaultCancelReason}}})},
		{"CancelAccepted", obj([]string{"instance_id", "terminated", "reason"}, OrderedObject{
			{"instance_id", str()}, {"terminated", boolean()}, {"reason", str()},
		})},
		{"RunSummary", obj([]string{"instance_id", "runtime_status", "graph_name", "graph_version", "graph_hash", "created_at", "last_updated_at"}, OrderedObject{
			{"instance_id", str()}, {"runtime_status", ref("RuntimeStatus")}, {"graph_name", str()},
			{"graph_version", str()}, {"graph_hash", str()},
			{"created_at", schema{"type": "string", "format": "date-time"}}, {"last_updated_at", schema{"type": "string", "format": "date-time"}},
		})},
		{"RunList", obj([]string{"runs", "continuation_token"}, OrderedObject{
			{"runs", arrayOf(ref("RunSummary"))}, {"continuation_token", nullableStr()},
		})},
		{"HistoryEvent", obj([]string{"sequence", "type", "name", "node", "timestamp", "data"}, OrderedObject{
			{"sequence", schema{"type": "integer"}}, {"type", str()}, {"name", nullableStr()}, {"node", nullableStr()},
			{"timestamp", schema{"type": "string", "format": "date-time"}}, {"data", anyValue("Event data.")},
		})},
		{"RunHistory", obj([]string{"instance_id", "events", "continuation_token"}, OrderedObject{
			{"instance_id", str()}, {"events", arrayOf(ref("HistoryEvent"))}, {"continuation_token", nullableStr()},
		})},
		{"RunPurged", obj([]string{"instance_id", "purged"}, OrderedObject{{"instance_id", str()}, {"purged", boolean()}})},
		{"HealthResponse", obj([]string{"ok", "registered_graphs"}, OrderedObject{
			{"ok", boolean()}, {"registered_graphs", arrayOf(ref("ManifestFragment"))},
		})},
		{"ManifestFragment", obj([]string{"graph_name", "version", "graph_hash", "entrypoint", "state_model_name", "nodes", "events"}, OrderedObject{
			{"graph_name", str()}, {"version", str()}, {"graph_hash", str()}, {"entrypoint", str()},
			{"state_model_name", str()}, {"nodes", arrayOf(str())}, {"events", arrayOf(str())},
		})},
		{"Error", obj([]string{"error"}, OrderedObject{{"error", str()}})},
		{"RunConflict", runState("instance already exists | instance is not running | instance is still active")},
	}
}
