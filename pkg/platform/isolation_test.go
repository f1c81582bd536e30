package platform

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// isoFixture serves the platform routes with isolation on through both transports; the
// standalone server believes X-MS-CLIENT-PRINCIPAL-ID from the given proxies.
func isoFixture(t *testing.T, proxies ...string) []funchosttest.Transport {
	t.Helper()
	var cfg isolation.Config
	cfg.IdentityHeader = isolation.PrincipalIDHeader
	for _, p := range proxies {
		cfg.TrustedProxies = append(cfg.TrustedProxies, netip.MustParsePrefix(p))
	}
	iso, err := isolation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return isoServe(t, nil, iso)
}

// isoServe serves the graph "chat" and the platform routes (threads in memory) through both
// transports, with isolation hostIso on the hosting app and platIso on the platform routes.
func isoServe(t *testing.T, hostIso, platIso *isolation.Isolation) []funchosttest.Transport {
	t.Helper()
	app, err := host.New(host.Options{PlatformCompat: true, Isolation: hostIso, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(newMemGraph(), "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := Mount(app, Options{Threads: threads.NewMemory(), Isolation: platIso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return funchosttest.Transports(t, app.FunctionApp())
}

// user is a caller: an identity (sent as App Service Authentication sends it) and a key.
type user struct{ id, key string }

func (u user) do(t *testing.T, tr funchosttest.Transport, method, path, body string) resp {
	t.Helper()
	h := []string{"x-functions-key", u.key}
	if u.id != "" {
		h = append(h, isolation.PrincipalIDHeader, u.id, isolation.PrincipalIDPHeader, "aad")
	}
	return doHeaders(t, tr, method, path, body, h...)
}

// owner is the owner a transport records for identity id: qualified by the identity
// provider under the host, the header's value standalone.
func owner(tr funchosttest.Transport, id string) string {
	if tr.Name == funchosttest.TransportEmulatedHost {
		return "aad:" + id
	}
	return id
}

func threadIDs(t *testing.T, r resp) []string {
	t.Helper()
	var ts []threadBody
	if r.status != 200 || json.Unmarshal([]byte(r.body), &ts) != nil {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	var ids []string
	for _, th := range ts {
		ids = append(ids, th.ThreadID)
	}
	return ids
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestIsolation_TwoUsers_BothTransports(t *testing.T) {
	for _, tr := range isoFixture(t, "127.0.0.1/32") {
		t.Run(tr.Name, func(t *testing.T) {
			alice, bob := user{"alice", tr.FunctionKey}, user{"bob", tr.FunctionKey}
			admin, anon := user{"", tr.MasterKey}, user{"", tr.FunctionKey}

			// A client cannot choose the owner: create overwrites it.
			r := alice.do(t, tr, "POST", "/api/threads", `{"metadata":{"owner":"bob","topic":"x"}}`)
			var th threadBody
			if err := json.Unmarshal([]byte(r.body), &th); r.status != 200 || err != nil ||
				th.Metadata["owner"] != owner(tr, "alice") || th.Metadata["topic"] != "x" {
				t.Fatalf("alice create: %d %s", r.status, r.body)
			}
			tid := th.ThreadID
			r = bob.do(t, tr, "POST", "/api/threads", `{}`)
			var bobThread threadBody
			_ = json.Unmarshal([]byte(r.body), &bobThread)

			// Bob meets alice's thread exactly as a missing one, on every route.
			notFound := detail("Thread '" + tid + "' not found")
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/api/threads/" + tid, ""},
				{"PATCH", "/api/threads/" + tid, `{"metadata":{"a":1}}`},
				{"PATCH", "/api/threads/" + tid, `{}`},
				{"DELETE", "/api/threads/" + tid, ""},
				{"GET", "/api/threads/" + tid + "/state", ""},
				{"POST", "/api/threads/" + tid + "/state", `{"values":{"a":1}}`},
				{"POST", "/api/threads/" + tid + "/state/checkpoint", `{}`},
				{"POST", "/api/threads/" + tid + "/history", `{}`},
				{"GET", "/api/threads/" + tid + "/runs", ""},
				{"POST", "/api/threads/" + tid + "/runs", `{"assistant_id":"chat"}`},
				{"POST", "/api/threads/" + tid + "/runs/wait", `{"assistant_id":"chat"}`},
				{"POST", "/api/threads/" + tid + "/runs/wait", `{"assistant_id":"chat","if_not_exists":"create"}`},
				{"POST", "/api/threads/" + tid + "/runs/stream", `{"assistant_id":"chat"}`},
			} {
				if r := bob.do(t, tr, c.method, c.path, c.body); r.status != 404 || r.body != notFound {
					t.Errorf("bob %s %s: %d %s, want 404 %s", c.method, c.path, r.status, r.body, notFound)
				}
			}
			// An id is global: bob cannot take alice's, and do_nothing does not hand it over.
			for _, ifExists := range []string{"raise", "do_nothing"} {
				r := bob.do(t, tr, "POST", "/api/threads", `{"thread_id":"`+tid+`","if_exists":"`+ifExists+`"}`)
				if r.status != 409 || r.body != detail("Thread '"+tid+"' already exists") {
					t.Errorf("bob create %s: %d %s", ifExists, r.status, r.body)
				}
			}

			// Alice runs on her thread; the run and its routes are hers alone.
			r = alice.do(t, tr, "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"chat","input":{"n":1},"metadata":{"owner":"bob"}}`)
			var run runBody
			if err := json.Unmarshal([]byte(r.body), &run); r.status != 200 || err != nil || run.Metadata["owner"] != owner(tr, "alice") {
				t.Fatalf("alice run: %d %s", r.status, r.body)
			}
			runPath := "/api/threads/" + tid + "/runs/" + run.RunID
			if r := alice.do(t, tr, "GET", runPath+"/join", ""); r.status != 200 {
				t.Fatalf("alice join: %d %s", r.status, r.body)
			}
			if r := alice.do(t, tr, "GET", runPath+"/stream", ""); r.status != 200 || !strings.HasSuffix(r.body, "event: end\ndata: null\n\n") {
				t.Fatalf("alice join stream: %d %s", r.status, r.body)
			}
			for _, c := range []struct{ method, path string }{{"GET", runPath}, {"GET", runPath + "/join"}, {"GET", runPath + "/stream"}, {"POST", runPath + "/cancel"}} {
				if r := bob.do(t, tr, c.method, c.path, ""); r.status != 404 || r.body != notFound {
					t.Errorf("bob %s %s: %d %s", c.method, c.path, r.status, r.body)
				}
			}
			if r := alice.do(t, tr, "GET", "/api/threads/"+tid, ""); r.status != 200 || !strings.Contains(r.body, `"owner": "`+owner(tr, "alice")+`"`) {
				t.Errorf("alice get after run: %d %s", r.status, r.body)
			}

			// A threadless run's kept thread is the caller's.
			if r := alice.do(t, tr, "POST", "/api/runs/wait", `{"assistant_id":"chat","on_completion":"keep"}`); r.status != 200 {
				t.Fatalf("alice threadless: %d %s", r.status, r.body)
			}
			if n := bob.do(t, tr, "POST", "/api/threads/count", `{}`); n.status != 200 || n.body != "1" {
				t.Errorf("bob count: %d %s, want 1", n.status, n.body)
			}
			if n := alice.do(t, tr, "POST", "/api/threads/count", `{"metadata":{"owner":"bob"}}`); n.status != 200 || n.body != "2" {
				t.Errorf("alice count (owner filter overridden): %d %s, want 2", n.status, n.body)
			}
			if ids := threadIDs(t, bob.do(t, tr, "POST", "/api/threads/search", `{}`)); len(ids) != 1 || ids[0] != bobThread.ThreadID {
				t.Errorf("bob search: %v, want only %s", ids, bobThread.ThreadID)
			}

			// Owner patches: another owner 403, one's own or other keys fine.
			if r := alice.do(t, tr, "PATCH", "/api/threads/"+tid, `{"metadata":{"owner":"bob"}}`); r.status != 403 ||
				r.body != detail("Forbidden: metadata key 'owner' is set by the server") {
				t.Errorf("alice patch owner: %d %s", r.status, r.body)
			}
			if r := alice.do(t, tr, "PATCH", "/api/threads/"+tid, `{"metadata":{"owner":"`+owner(tr, "alice")+`","b":2}}`); r.status != 200 {
				t.Errorf("alice patch: %d %s", r.status, r.body)
			}

			// The master key sees and acts on every thread.
			all := threadIDs(t, admin.do(t, tr, "POST", "/api/threads/search", `{"limit":100}`))
			if !has(all, tid) || !has(all, bobThread.ThreadID) {
				t.Errorf("admin search: %v", all)
			}
			if r := admin.do(t, tr, "GET", runPath, ""); r.status != 200 {
				t.Errorf("admin get run: %d %s", r.status, r.body)
			}
			if r := admin.do(t, tr, "DELETE", "/api/threads/"+bobThread.ThreadID, ""); r.status != 204 {
				t.Errorf("admin delete: %d %s", r.status, r.body)
			}

			// No identity and no master key: 401 everywhere, assistants included.
			for _, p := range []string{"/api/threads/search", "/api/assistants/search"} {
				if r := anon.do(t, tr, "POST", p, `{}`); r.status != 401 || r.body != detail("Unauthorized: the request carries no caller identity") {
					t.Errorf("anonymous %s: %d %s", p, r.status, r.body)
				}
			}
		})
	}
}

// TestIsolation_UntrustedPeer_BothTransports: the standalone server believes the identity
// header only from a trusted proxy (here none matches 127.0.0.1) and refuses it otherwise,
// while under the host App Service's header is the identity.
func TestIsolation_UntrustedPeer_BothTransports(t *testing.T) {
	for _, tr := range isoFixture(t, "10.0.0.0/8") {
		t.Run(tr.Name, func(t *testing.T) {
			alice, admin := user{"alice", tr.FunctionKey}, user{"", tr.MasterKey}
			r := alice.do(t, tr, "POST", "/api/threads", `{}`)
			if tr.Name == funchosttest.TransportStandalone {
				if r.status != 403 || r.body != detail("Forbidden: the identity header is only accepted from a trusted proxy") {
					t.Errorf("spoofed identity: %d %s, want 403", r.status, r.body)
				}
				if r := (user{"alice", tr.MasterKey}).do(t, tr, "POST", "/api/threads", `{}`); r.status != 403 {
					t.Errorf("spoofed identity with the master key: %d %s, want 403", r.status, r.body)
				}
			} else if r.status != 200 {
				t.Errorf("host identity: %d %s", r.status, r.body)
			}
			if r := admin.do(t, tr, "POST", "/api/threads/count", `{}`); r.status != 200 {
				t.Errorf("master key without identity: %d %s", r.status, r.body)
			}
		})
	}
}

// TestIsolation_OffByDefault_BothTransports: without Options.Isolation the identity headers
// mean nothing: every caller sees every thread and the owner metadata is kept as sent.
func TestIsolation_OffByDefault_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			alice, bob := user{"alice", tr.FunctionKey}, user{"bob", tr.FunctionKey}
			r := alice.do(t, tr, "POST", "/api/threads", `{"metadata":{"owner":"carol"}}`)
			var th threadBody
			if err := json.Unmarshal([]byte(r.body), &th); r.status != 200 || err != nil || th.Metadata["owner"] != "carol" {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			if r := bob.do(t, tr, "GET", "/api/threads/"+th.ThreadID, ""); r.status != 200 {
				t.Errorf("bob get: %d %s", r.status, r.body)
			}
			if r := (user{"", tr.FunctionKey}).do(t, tr, "PATCH", "/api/threads/"+th.ThreadID, `{"metadata":{"owner":"dave"}}`); r.status != 200 {
				t.Errorf("anonymous patch: %d %s", r.status, r.body)
			}
		})
	}
}
