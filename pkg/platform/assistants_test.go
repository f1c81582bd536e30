package platform

import (
	"regexp"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

func TestAssistants_Contract_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{MaxRequestBodyBytes: 64}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tests := []struct {
				name, method, path, body string
				status                   int
				want                     string // substring of the body, or the exact body when it starts with '{' or '['
			}{
				{"search all in registration order", "POST", "/api/assistants/search", "", 200, `"assistant_id": "chat", "graph_id": "chat", "config": {}, "created_at": "`},
				{"search by graph_id", "POST", "/api/assistants/search", `{"graph_id":"plain"}`, 200, `"name": "plain", "description": "the plain graph"`},
				{"search by name ignoring case", "POST", "/api/assistants/search", `{"name":"LOCK","metadata":{"x":1}}`, 200, `"assistant_id": "locked"`},
				{"search paging", "POST", "/api/assistants/search", `{"limit":1,"offset":5}`, 200, `[]`},
				{"search bad limit", "POST", "/api/assistants/search", `{"limit":0}`, 422, `Validation error: limit`},
				{"search bad offset", "POST", "/api/assistants/search", `{"offset":-1}`, 422, `Validation error: offset`},
				{"search invalid JSON", "POST", "/api/assistants/search", `{`, 400, detail("Invalid JSON body")},
				{"search non-object", "POST", "/api/assistants/search", `[1]`, 422, `Validation error:`},
				{"search too large", "POST", "/api/assistants/search", `{"name":"` + strings.Repeat("x", 60) + `"}`, 400, detail("Request body too large: 71 bytes (max 64 bytes)")},
				{"count", "POST", "/api/assistants/count", "  ", 200, `3`},
				{"count filtered", "POST", "/api/assistants/count", `{"graph_id":"chat"}`, 200, `1`},
				{"get", "GET", "/api/assistants/chat", "", 200, `"version": 1, "name": "chat"`},
				{"get unknown", "GET", "/api/assistants/nope", "", 404, detail("Assistant 'nope' not found")},
			}
			for _, tc := range tests {
				r := do(t, tr, tc.method, tc.path, tc.body)
				if r.status != tc.status || !matches(r.body, tc.want) {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
				// Through the Functions host a JSON-mode string body gets "; charset=utf-8".
				if ct := r.header.Get("Content-Type"); ct != "application/json" && ct != "application/json; charset=utf-8" {
					t.Errorf("%s: content type %q", tc.name, ct)
				}
			}
			all := do(t, tr, "POST", "/api/assistants/search", "").body
			if i, j, k := strings.Index(all, `"chat"`), strings.Index(all, `"locked"`), strings.Index(all, `"plain"`); !(i < j && j < k) {
				t.Errorf("assistants not in registration order: %s", all)
			}
		})
	}
}

// matches compares exactly when want is a JSON document or a bare number, else by substring.
func matches(body, want string) bool {
	if want == "" {
		return body == ""
	}
	if want[0] == '^' {
		return regexp.MustCompile(want).MatchString(body)
	}
	if want[0] == '{' || want == "[]" || (want[0] >= '0' && want[0] <= '9') {
		return body == want
	}
	return strings.Contains(body, want)
}
