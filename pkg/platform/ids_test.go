package platform

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// TestPlatform_DotSegmentThreadIDs_Refused: "." and ".." cannot be thread ids — every URL
// normaliser removes them from a path — so creating one is a 400, and a path that carries
// them percent-encoded (as a client that does not collapse them must send it) is the same
// 400 on every thread route, through both transports. A run id is the server's UUID, so
// "." and ".." there answer 404 like any unknown run.
func TestPlatform_DotSegmentThreadIDs_Refused(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	refused := detail("Thread ID must not be '.' or '..'")
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			before, _ := f.store.Count(t.Context(), threads.Query{})
			for _, id := range []string{".", ".."} {
				if r := do(t, tr, "POST", "/api/threads", `{"thread_id": "`+id+`"}`); r.status != 400 || r.body != refused {
					t.Errorf("create %q: %d %s", id, r.status, r.body)
				}
			}
			tid := newThread(t, tr, "")
			for _, seg := range []string{"%2E", "%2e%2E"} {
				for _, c := range []struct{ method, path, body string }{
					{"GET", "/api/threads/" + seg, ""},
					{"DELETE", "/api/threads/" + seg, ""},
					{"GET", "/api/threads/" + seg + "/state", ""},
					{"POST", "/api/threads/" + seg + "/runs/wait", `{"assistant_id": "chat", "if_not_exists": "create"}`},
				} {
					if r := do(t, tr, c.method, c.path, c.body); r.status != 400 || r.body != refused {
						t.Errorf("%s %s: %d %s, want 400 %s", c.method, c.path, r.status, r.body, refused)
					}
				}
				if r := do(t, tr, "GET", "/api/threads/"+tid+"/runs/"+seg, ""); r.status != 404 {
					t.Errorf("GET run %s: %d %s, want 404", seg, r.status, r.body)
				}
			}
			if n, _ := f.store.Count(t.Context(), threads.Query{}); n != before+1 {
				t.Errorf("%d threads stored, want %d: only the one created", n, before+1)
			}
		})
	}
}
