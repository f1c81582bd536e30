package engine

import (
	"encoding/json"
	"strconv"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// The engine writes its JSON by hand — custom statuses, outputs, history data, work items —
// from strings and raw JSON values: no reflection on the hot path.

// customStatus returns the 4-key custom status of a visit of node.
func customStatus(h *head, node string) string {
	return jsonObject("graph_name", jstr(h.graph), "graph_version", jstr(h.version), "graph_hash", jstr(h.hash),
		"current_node", jstr(node))
}

// waitingStatus returns the 6-key custom status of a run waiting after node.
func waitingStatus(h *head, node, event, resume string) string {
	return jsonObject("graph_name", jstr(h.graph), "graph_version", jstr(h.version), "graph_hash", jstr(h.hash),
		"current_node", jstr(node), "waiting_for_event", jstr(event), "resume_node", jstr(resume))
}

// completedOutput returns the Completed output object.
func completedOutput(h *head, node string, state json.RawMessage) string {
	return jsonObject("graph_name", jstr(h.graph), "graph_version", jstr(h.version), "graph_hash", jstr(h.hash),
		"final_node", jstr(node), "state", string(state))
}

// decisionJSON returns the route decision of a route_resolved history row.
func decisionJSON(d durable.RouteDecision) string {
	return jsonObject("action", jstr(string(d.Action)), "next_node", jnull(d.NextNode), "event_name", jnull(d.EventName),
		"resume_node", jnull(d.ResumeNode), "note", jnull(d.Note))
}

// jsonObject builds {"k1":v1,...} from key/value pairs; values are raw JSON.
func jsonObject(kv ...string) string {
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, kv[i])
		b = append(b, ':')
		b = append(b, kv[i+1]...)
	}
	return string(append(b, '}'))
}

// jstr returns s as a JSON string.
func jstr(s string) string { return string(appendJSONString(nil, s)) }

// jnull returns the JSON string s, or null when empty.
func jnull(s string) string {
	if s == "" {
		return "null"
	}
	return jstr(s)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// itoa returns n in decimal.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
