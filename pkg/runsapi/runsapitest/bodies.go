package runsapitest

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Graph hashes of the example graphs (contract's vectors).
const (
	PipelineHash = "6135ea2aa13d431c"
	SupportHash  = "af183f226f37e6fc"
)

// PipelineFinalState is data_pipeline's final state for source_url https://example.com/data.
const PipelineFinalState = `{"source_url":"https://example.com/data","raw_records":[{"id":1,"name":"  Alice  ","score":"85"},{"id":2,"name":"  Bob  ","score":"92"},{"id":3,"name":"  Carol  ","score":"78"}],"transformed_records":[{"id":1,"name":"Alice","score":85},{"id":2,"name":"Bob","score":92},{"id":3,"name":"Carol","score":78}],"load_result":"Loaded 3 records to https://example.com/data/output","record_count":3}`

// Dumps rewrites compact JSON in the API's json.dumps style.
func Dumps(compactJSON string) string { return string(pyjson.AppendReformat(nil, []byte(compactJSON))) }

// StatusBody is the expected status body for a run.
func StatusBody(id, runtime, custom, input, output string) string {
	return Dumps(fmt.Sprintf(`{"instance_id":%q,"runtime_status":%q,"custom_status":%s,"input":%s,"output":%s}`, id, runtime, custom, input, output))
}

// Custom4 is the custom status of a run at node.
func Custom4(graph, hash, node string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"current_node":%q}`, graph, hash, node)
}

// Custom6 is the custom status of a run at node waiting for event, resuming at resume.
func Custom6(graph, hash, node, event, resume string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"current_node":%q,"waiting_for_event":%q,"resume_node":%q}`, graph, hash, node, event, resume)
}

// RunInput is the input member of a run's status.
func RunInput(graph, hash, initial string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_hash":%q,"initial_state":%s,"current_node":null,"metadata":{}}`, graph, hash, initial)
}

// CompletedOutput is the output member of a completed run's status.
func CompletedOutput(graph, hash, final, state string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"final_node":%q,"state":%s}`, graph, hash, final, state)
}
