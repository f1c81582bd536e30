package runsapi_test

import (
	"encoding/json"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// serveIsolated serves the runs API over a started in-memory engine through both
// transports, with isolation iso (nil: off).
func serveIsolated(t *testing.T, iso *isolation.Isolation) []funchosttest.Transport {
	t.Helper()
	_, trs := serveRunsWith(t, engine.Options{Registry: runsapitest.Registry(t, examples.All), Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()},
		runsapi.Options{AuthLevel: "function", Isolation: iso})
	return trs
}

func newIsolation(t *testing.T, proxy string) *isolation.Isolation {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader, TrustedProxies: []netip.Prefix{netip.MustParsePrefix(proxy)}})
	if err != nil {
		t.Fatal(err)
	}
	return iso
}

// as sends a request as identity id ("" none) with key.
func as(t *testing.T, tr funchosttest.Transport, id, key, method, path, body string) runsapitest.Response {
	t.Helper()
	h := []string{"x-functions-key", key}
	if id != "" {
		h = append(h, isolation.PrincipalIDHeader, id, isolation.PrincipalIDPHeader, "aad")
	}
	return runsapitest.Call(t, tr, method, path, body, h...)
}

func listedIDs(t *testing.T, r runsapitest.Response) []string {
	t.Helper()
	var body struct {
		Runs []struct {
			InstanceID string `json:"instance_id"`
		} `json:"runs"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, run := range body.Runs {
		ids = append(ids, run.InstanceID)
	}
	return ids
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestIsolation_Runs_TwoUsers_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			ownerOf := func(id string) string {
				if tr.Name == funchosttest.TransportEmulatedHost {
					return "aad:" + id
				}
				return id
			}
			id := runsapitest.UniqueID(tr, "iso")
			start := as(t, tr, "alice", key, "POST", "/api/graphs/data_pipeline/runs",
				`{"instance_id":"`+id+`","input":{"source_url":"https://example.com/data"},"metadata":{"owner":"bob","k":1}}`)
			if start.Status != 202 {
				t.Fatalf("alice start: %d %s", start.Status, start.Body)
			}
			status := as(t, tr, "alice", key, "GET", "/api/runs/"+id, "")
			if want := `"metadata": {"k": 1, "owner": "` + ownerOf("alice") + `"}`; status.Status != 200 || !strings.Contains(status.Body, want) {
				t.Fatalf("alice status: %d %s, want %s", status.Status, status.Body, want)
			}
			notFound := `{"error": "instance not found"}`
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/api/runs/" + id, ""},
				{"POST", "/api/runs/" + id + "/events/approval", `{}`},
				{"POST", "/api/runs/" + id + "/cancel", `{}`},
				{"GET", "/api/runs/" + id + "/history", ""},
				{"DELETE", "/api/runs/" + id, ""},
			} {
				as(t, tr, "bob", key, c.method, c.path, c.body).Expect(t, "bob "+c.method+" "+c.path, 404, notFound)
			}
			// Bob cannot take alice's id (the engine would replace her finished run).
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				var v runsapitest.StatusView
				r := as(t, tr, "alice", key, "GET", "/api/runs/"+id, "")
				if err := json.Unmarshal([]byte(r.Body), &v); r.Status != 200 || err != nil || time.Now().After(deadline) {
					t.Fatalf("alice status: %d %s", r.Status, r.Body)
				}
				if runsapitest.Finished(v) {
					break
				}
			}
			if r := as(t, tr, "bob", key, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id":"`+id+`","input":{"source_url":"https://example.com/data"}}`); r.Status != 409 ||
				r.Body != `{"error": "instance already exists", "instance_id": "`+id+`"}` {
				t.Errorf("bob start with alice's id: %d %s, want 409 without her run's status", r.Status, r.Body)
			}
			if ids := listedIDs(t, as(t, tr, "bob", key, "GET", "/api/runs", "")); contains(ids, id) {
				t.Errorf("bob lists alice's run: %v", ids)
			}
			if ids := listedIDs(t, as(t, tr, "alice", key, "GET", "/api/runs", "")); !contains(ids, id) {
				t.Errorf("alice does not list her run: %v", ids)
			}
			if ids := listedIDs(t, as(t, tr, "", tr.MasterKey, "GET", "/api/runs", "")); !contains(ids, id) {
				t.Errorf("the master key does not list alice's run: %v", ids)
			}
			as(t, tr, "", tr.MasterKey, "GET", "/api/runs/"+id+"/history", "").Expect(t, "admin history", 200, "")
			as(t, tr, "", key, "GET", "/api/runs", "").Expect(t, "no identity", 401, `{"error": "unauthorized: the request carries no caller identity"}`)
			as(t, tr, "alice", key, "DELETE", "/api/runs/"+id, "").Expect(t, "alice purge", 200, "")
		})
	}
}

func TestIsolation_Runs_UntrustedPeer_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "192.0.2.0/24")) {
		t.Run(tr.Name, func(t *testing.T) {
			r := as(t, tr, "alice", tr.FunctionKey, "GET", "/api/runs", "")
			if tr.Name == funchosttest.TransportStandalone {
				r.Expect(t, "spoofed identity", 403, `{"error": "forbidden: the identity header is only accepted from a trusted proxy"}`)
			} else {
				r.Expect(t, "host identity", 200, "")
			}
		})
	}
}

func TestIsolation_Runs_OffByDefault_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "off")
			as(t, tr, "alice", tr.FunctionKey, "POST", "/api/graphs/data_pipeline/runs",
				`{"instance_id":"`+id+`","input":{"source_url":"https://example.com/data"},"metadata":{"owner":"carol"}}`).Expect(t, "start", 202, "")
			r := as(t, tr, "bob", tr.FunctionKey, "GET", "/api/runs/"+id, "")
			if r.Status != 200 || !strings.Contains(r.Body, `"metadata": {"owner": "carol"}`) {
				t.Errorf("bob status: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestIsolation_Runs_VersionsAdminOnly_BothTransports: the versions route counts every
// identity's runs, so under isolation only the master key may list them.
func TestIsolation_Runs_VersionsAdminOnly_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			as(t, tr, "alice", tr.FunctionKey, "GET", "/api/graphs/data_pipeline/versions", "").Expect(t, "alice versions", 403,
				`{"error": "forbidden: under user isolation, graph versions are listed for the master key only"}`)
			as(t, tr, "", tr.FunctionKey, "GET", "/api/graphs/data_pipeline/versions", "").Expect(t, "no identity", 401, "")
			r := as(t, tr, "", tr.MasterKey, "GET", "/api/graphs/data_pipeline/versions", "")
			if r.Status != 200 || !strings.Contains(r.Body, `"unfinished_runs"`) {
				t.Errorf("admin versions: %d %s", r.Status, r.Body)
			}
		})
	}
	for _, tr := range serveIsolated(t, nil) {
		t.Run("off/"+tr.Name, func(t *testing.T) {
			as(t, tr, "alice", tr.FunctionKey, "GET", "/api/graphs/data_pipeline/versions", "").Expect(t, "versions, isolation off", 200, "")
		})
	}
}

// TestIsolation_Runs_ListingScopedToCaller_BothTransports: an identity lists its own runs
// only, read from the engine's owner index, so an identity without runs gets no runs and no
// token whatever others keep, and no token crosses identities or is minted without the key
// (runsapitest.CheckScopedListings).
func TestIsolation_Runs_ListingScopedToCaller_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			runsapitest.CheckScopedListings(t, tr, func(t *testing.T, id, method, path, body string) runsapitest.Response {
				t.Helper()
				if id == "" {
					return as(t, tr, "", tr.MasterKey, method, path, body)
				}
				return as(t, tr, id, tr.FunctionKey, method, path, body)
			})
		})
	}
}

// An identity is compared as sent: one with a no-break space after it is refused 400, not
// taken for alice.
func TestIsolation_Runs_IdentityIsExact_BothTransports(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			want := `{"error": "bad request: the caller identity must be at most 512 bytes of UTF-8 without control characters or whitespace other than spaces"}`
			as(t, tr, "alice\u00a0", tr.FunctionKey, "GET", "/api/runs", "").Expect(t, "no-break space", 400, want)
			as(t, tr, "alice\u00a0", tr.FunctionKey, "POST", "/api/graphs/data_pipeline/runs", `{"input":{"source_url":"https://example.com/data"}}`).
				Expect(t, "no-break space start", 400, want)
		})
	}
}
