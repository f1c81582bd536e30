package platform

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// TestPlatform_DotSegmentIDs_NotFound: the platform's thread and run ids are UUIDs the
// server chooses, so "." and ".." in their path segments (percent-encoded, as a client that
// does not collapse them must send them) answer 404 like any unknown id, through both
// transports, and reach no thread.
func TestPlatform_DotSegmentIDs_NotFound(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			for _, seg := range []string{"%2E", "%2e%2E"} {
				id := strings.NewReplacer("%2E", ".", "%2e", ".").Replace(seg)
				for _, c := range []struct{ method, path, want string }{
					{"GET", "/api/threads/" + seg, detail("Thread '" + id + "' not found")},
					{"GET", "/api/threads/" + tid + "/runs/" + seg, ""},
				} {
					r := do(t, tr, c.method, c.path, "")
					if r.status != 404 || c.want != "" && r.body != c.want {
						t.Errorf("%s %s: %d %s, want 404 %s", c.method, c.path, r.status, r.body, c.want)
					}
				}
			}
		})
	}
}
