package engine

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// The engine writes its JSON by hand — custom statuses, outputs, history data, work items —
// from strings and raw JSON values: no reflection on the hot path.

// customStatus returns the 4-key custom status of a visit of node.
func customStatus(h *head, node string) string {
	var buf [512]byte // on the stack: the string returned is the one allocation
	b := graphKeys(append(buf[:0], '{'), h)
	b = jsonStr(b, "current_node", node)
	return string(append(b, '}'))
}

// waitingStatus returns the 6-key custom status of a run waiting after node.
func waitingStatus(h *head, node, event, resume string) string {
	var buf [512]byte
	b := graphKeys(append(buf[:0], '{'), h)
	b = jsonStr(b, "current_node", node)
	b = jsonStr(b, "waiting_for_event", event)
	b = jsonStr(b, "resume_node", resume)
	return string(append(b, '}'))
}

// completedOutput returns the Completed output object; state is raw JSON.
func completedOutput(h *head, node string, state string) string {
	var buf [512]byte
	b := graphKeys(append(buf[:0], '{'), h)
	b = jsonStr(b, "final_node", node)
	b = append(jsonKey(b, "state"), state...)
	return string(append(b, '}'))
}

// decisionJSON returns the route decision of a route_resolved history row.
func decisionJSON(d durable.RouteDecision) string {
	if d.Action == durable.ActionParallel {
		return parallelDecisionJSON(d)
	}
	var buf [256]byte
	b := jsonStr(append(buf[:0], '{'), "action", string(d.Action))
	b = jsonNull(b, "next_node", d.NextNode)
	b = jsonNull(b, "event_name", d.EventName)
	b = jsonNull(b, "resume_node", d.ResumeNode)
	b = jsonNull(b, "note", d.Note)
	return string(append(b, '}'))
}

// graphKeys appends the graph_name, graph_version and graph_hash members of h.
func graphKeys(b []byte, h *head) []byte {
	b = jsonStr(b, "graph_name", h.graph)
	b = jsonStr(b, "graph_version", h.version)
	return jsonStr(b, "graph_hash", h.hash)
}

// jsonKey appends the member name k of an object begun in b (a comma first unless b holds
// only its '{').
func jsonKey(b []byte, k string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(appendJSONString(b, k), ':')
}

// jsonStr appends the member k with the JSON string v.
func jsonStr(b []byte, k, v string) []byte { return appendJSONString(jsonKey(b, k), v) }

// jsonNull appends the member k with the JSON string v, or null when v is empty.
func jsonNull(b []byte, k, v string) []byte {
	if v == "" {
		return append(jsonKey(b, k), "null"...)
	}
	return jsonStr(b, k, v)
}

// jsonObject builds {"k1":v1,...} from key/value pairs; values are raw JSON.
func jsonObject(kv ...string) string {
	var buf [512]byte // on the stack: the string below is the one allocation
	b := append(buf[:0], '{')
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
func jstr(s string) string {
	var buf [128]byte
	return string(appendJSONString(buf[:0], s))
}

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

// cutAtRune returns s cut to at most n bytes, at a character boundary.
func cutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
