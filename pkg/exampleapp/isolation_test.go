package exampleapp_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// isolatedApp serves the example app with per-user isolation through both transports; the
// standalone server believes X-MS-CLIENT-PRINCIPAL-ID from loopback.
func isolatedApp(t *testing.T) []funchosttest.Transport {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	return serveApp(t, exampleapp.Config{Isolation: iso})
}

// doAs sends a request as identity id ("" none) with key.
func doAs(t *testing.T, tr funchosttest.Transport, id, key, method, path, body string) (int, string) {
	t.Helper()
	h := []string{"x-functions-key", key}
	if id != "" {
		h = append(h, isolation.PrincipalIDHeader, id)
	}
	return doHeaders(t, tr, method, path, body, h...)
}

// TestIsolation_DurableAssistantRuns_BothTransports: the engine run behind a durable
// assistant's thread records the thread's owner, so under isolation the owner (and the
// master key) sees it in the runs API, its listing included, and another identity does not —
// for a blocking run and for a background run alike.
func TestIsolation_DurableAssistantRuns_BothTransports(t *testing.T) {
	for _, tr := range isolatedApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			for _, route := range []string{"runs/wait", "runs"} {
				code, body := doAs(t, tr, "alice", key, "POST", "/api/threads", `{}`)
				var th struct {
					ThreadID string `json:"thread_id"`
				}
				if err := json.Unmarshal([]byte(body), &th); code != 200 || err != nil {
					t.Fatalf("alice create thread: %d %s", code, body)
				}
				if code, body := doAs(t, tr, "alice", key, "POST", "/api/threads/"+th.ThreadID+"/"+route,
					`{"assistant_id":"content_classifier","input":{"text":"hello"}}`); code != 200 {
					t.Fatalf("alice %s: %d %s", route, code, body)
				}
				run := "/api/runs/thread-" + th.ThreadID
				var status struct {
					Input struct {
						Metadata map[string]any `json:"metadata"`
					} `json:"input"`
				}
				for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					code, body = doAs(t, tr, "alice", key, "GET", run, "")
					if code == 200 || time.Now().After(deadline) {
						break
					}
				}
				if err := json.Unmarshal([]byte(body), &status); code != 200 || err != nil || status.Input.Metadata["owner"] != "alice" {
					t.Fatalf("%s: alice gets the engine run: %d %s", route, code, body)
				}
				if code, body := doAs(t, tr, "bob", key, "GET", run, ""); code != 404 {
					t.Errorf("%s: bob gets alice's engine run: %d %s", route, code, body)
				}
				if code, body := doAs(t, tr, "", tr.MasterKey, "GET", run, ""); code != 200 {
					t.Errorf("%s: master key: %d %s", route, code, body)
				}
				// Its owner lists it too, from the owner index; another identity does not.
				listed := `"instance_id": "thread-` + th.ThreadID + `"`
				if code, body := doAs(t, tr, "alice", key, "GET", "/api/runs?limit=1000", ""); code != 200 || !strings.Contains(body, listed) {
					t.Errorf("%s: alice's listing: %d %s", route, code, body)
				}
				if code, body := doAs(t, tr, "bob", key, "GET", "/api/runs?limit=1000", ""); code != 200 || strings.Contains(body, listed) {
					t.Errorf("%s: bob's listing: %d %s", route, code, body)
				}
			}
		})
	}
}

// TestIsolation_HostingAndVersions_BothTransports: in the assembled app, echo_agent's hosting
// routes reach a thread only as its owner, and graph versions are the master key's only.
func TestIsolation_HostingAndVersions_BothTransports(t *testing.T) {
	for _, tr := range isolatedApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			key, tid := tr.FunctionKey, "echo-"+tr.Name
			invoke := `{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"` + tid + `"}}}`
			if code, body := doAs(t, tr, "alice", key, "POST", "/api/graphs/echo_agent/invoke", invoke); code != 200 {
				t.Fatalf("alice invoke: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "alice", key, "GET", "/api/graphs/echo_agent/threads/"+tid+"/state", ""); code != 200 || !strings.Contains(body, `"hi"`) {
				t.Errorf("alice state: %d %s", code, body)
			}
			notFound := `{"error":"error","detail":"Thread '` + tid + `' not found"}`
			if code, body := doAs(t, tr, "bob", key, "GET", "/api/graphs/echo_agent/threads/"+tid+"/state", ""); code != 404 || body != notFound {
				t.Errorf("bob state: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "bob", key, "POST", "/api/graphs/echo_agent/invoke", invoke); code != 404 || body != notFound {
				t.Errorf("bob invoke: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "alice", key, "GET", "/api/graphs/support_agent/versions", ""); code != 403 {
				t.Errorf("alice versions: %d %s", code, body)
			}
			if code, body := doAs(t, tr, "", tr.MasterKey, "GET", "/api/graphs/support_agent/versions", ""); code != 200 {
				t.Errorf("master key versions: %d %s", code, body)
			}
		})
	}
}

// asIdentity sends requests through tr as an identity with the function key, or with the
// master key and no identity for "".
func asIdentity(tr funchosttest.Transport) runsapitest.As {
	return func(t *testing.T, id, method, path, body string) runsapitest.Response {
		t.Helper()
		if id == "" {
			return runsapitest.Call(t, tr, method, path, body, "x-functions-key", tr.MasterKey)
		}
		return runsapitest.Call(t, tr, method, path, body, "x-functions-key", tr.FunctionKey, isolation.PrincipalIDHeader, id)
	}
}

// TestIsolation_ScopedListings_BothTransports: in the assembled app, GET /api/runs shows an
// identity its own runs only: no runs and no token to one without any, exactly their own to
// the owner, page by page (runsapitest.CheckScopedListings).
func TestIsolation_ScopedListings_BothTransports(t *testing.T) {
	for _, tr := range isolatedApp(t) {
		t.Run(tr.Name, func(t *testing.T) { runsapitest.CheckScopedListings(t, tr, asIdentity(tr)) })
	}
}
