package platform

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// nativeNotFound is the hosting routes' body for a missing thread.
func nativeNotFound(tid string) string {
	return `{"error":"error","detail":"Thread '` + tid + `' not found"}`
}

func invokeOn(tid string) string {
	return `{"input":{"n":1},"config":{"configurable":{"thread_id":"` + tid + `"}}}`
}

// TestIsolation_HostingRoutes_BothTransports: under isolation the hosting routes
// (/api/graphs/<name>/...) reach a thread only as its owner, with the platform threads as the
// record: a platform thread is its owner's on both route families, a hosting invoke with a
// new id creates the platform thread owned by the caller, and a deleted thread whose
// checkpoints remain cannot be claimed by another identity.
func TestIsolation_HostingRoutes_BothTransports(t *testing.T) {
	for _, tr := range isoFixture(t, "127.0.0.1/32") {
		t.Run(tr.Name, func(t *testing.T) {
			alice, bob := user{"alice", tr.FunctionKey}, user{"bob", tr.FunctionKey}
			admin, anon := user{"", tr.MasterKey}, user{"", tr.FunctionKey}

			r := alice.do(t, tr, "POST", "/api/threads", `{}`)
			var th threadBody
			if err := json.Unmarshal([]byte(r.body), &th); r.status != 200 || err != nil {
				t.Fatalf("alice create: %d %s", r.status, r.body)
			}
			tid := th.ThreadID
			if r := alice.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn(tid)); r.status != 200 {
				t.Fatalf("alice invoke on her platform thread: %d %s", r.status, r.body)
			}
			if r := alice.do(t, tr, "GET", "/api/graphs/chat/threads/"+tid+"/state", ""); r.status != 200 {
				t.Errorf("alice state: %d %s", r.status, r.body)
			}
			bobCannot := func(tid string) {
				t.Helper()
				for _, c := range []struct{ method, path, body string }{
					{"POST", "/api/graphs/chat/invoke", invokeOn(tid)},
					{"POST", "/api/graphs/chat/stream", invokeOn(tid)},
					{"GET", "/api/graphs/chat/threads/" + tid + "/state", ""},
				} {
					if r := bob.do(t, tr, c.method, c.path, c.body); r.status != 404 || r.body != nativeNotFound(tid) {
						t.Errorf("bob %s %s: %d %s, want 404 %s", c.method, c.path, r.status, r.body, nativeNotFound(tid))
					}
				}
			}
			bobCannot(tid)
			if r := admin.do(t, tr, "GET", "/api/graphs/chat/threads/"+tid+"/state", ""); r.status != 200 {
				t.Errorf("master key state: %d %s", r.status, r.body)
			}

			// A hosting-only client: a new thread id becomes a platform thread it owns.
			hid := "hosted-" + tr.Name
			if r := alice.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn(hid)); r.status != 200 {
				t.Fatalf("alice invoke on a new thread: %d %s", r.status, r.body)
			}
			r = alice.do(t, tr, "GET", "/api/threads/"+hid, "")
			if err := json.Unmarshal([]byte(r.body), &th); r.status != 200 || err != nil || th.Metadata["owner"] != owner(tr, "alice") {
				t.Fatalf("alice get the hosted thread: %d %s", r.status, r.body)
			}
			if r := bob.do(t, tr, "GET", "/api/threads/"+hid, ""); r.status != 404 {
				t.Errorf("bob get the hosted thread: %d %s", r.status, r.body)
			}
			bobCannot(hid)

			// State that a graph keeps for an id without a thread record (written with the
			// master key, before isolation, or left by an older release) is nobody's to claim:
			// not through the hosting routes, not by naming the id in POST /api/threads.
			kid := "kept-" + tr.Name
			if r := admin.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn(kid)); r.status != 200 {
				t.Fatalf("master key invoke: %d %s", r.status, r.body)
			}
			bobCannot(kid)
			for _, body := range []string{`{"thread_id":"` + kid + `"}`, `{"thread_id":"` + kid + `","if_exists":"do_nothing"}`} {
				if r := bob.do(t, tr, "POST", "/api/threads", body); r.status != 409 || r.body != `{"detail": "Thread '`+kid+`' already exists"}` {
					t.Errorf("bob claims an id with kept state (%s): %d %s, want 409", body, r.status, r.body)
				}
			}

			// Deleting a thread deletes what every graph keeps for it, whichever graph ran on
			// it: the id is free again, with nothing of alice's behind it.
			if r := alice.do(t, tr, "DELETE", "/api/threads/"+hid, ""); r.status != 204 {
				t.Fatalf("alice delete: %d %s", r.status, r.body)
			}
			if r := admin.do(t, tr, "GET", "/api/graphs/chat/threads/"+hid+"/state", ""); r.status != 404 {
				t.Errorf("state of the deleted thread is still kept: %d %s", r.status, r.body)
			}
			if r := bob.do(t, tr, "POST", "/api/threads", `{"thread_id":"`+hid+`"}`); r.status != 200 {
				t.Fatalf("bob creates the freed id: %d %s", r.status, r.body)
			}
			if r := bob.do(t, tr, "GET", "/api/graphs/chat/threads/"+hid+"/state", ""); strings.Contains(r.body, `"echo"`) {
				t.Errorf("bob sees alice's state on the re-created id: %d %s", r.status, r.body)
			}

			if r := anon.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn(tid)); r.status != 401 ||
				r.body != `{"error":"error","detail":"Unauthorized: the request carries no caller identity"}` {
				t.Errorf("no identity: %d %s", r.status, r.body)
			}
		})
	}
}

// TestIsolation_FromHostOptions_BothTransports: isolation set on the hosting app only
// (host.Options.Isolation) scopes the platform routes mounted on it too.
func TestIsolation_FromHostOptions_BothTransports(t *testing.T) {
	iso, err := isolation.New(isolation.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range isoServe(t, iso, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			if r := (user{"", tr.FunctionKey}).do(t, tr, "POST", "/api/threads/search", `{}`); r.status != 401 {
				t.Errorf("platform route without identity: %d %s, want 401", r.status, r.body)
			}
			if r := (user{"", tr.MasterKey}).do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn("t-"+tr.Name)); r.status != 200 {
				t.Errorf("master key invoke: %d %s", r.status, r.body)
			}
		})
	}
}

// TestIsolation_IdentityIsExact_BothTransports: an identity is compared as sent. One with a
// no-break space after it is not alice, nor anyone: it is refused 400 on the platform and
// hosting routes alike, and reaches none of alice's threads.
func TestIsolation_IdentityIsExact_BothTransports(t *testing.T) {
	for _, tr := range isoFixture(t, "127.0.0.1/32") {
		t.Run(tr.Name, func(t *testing.T) {
			alice := user{"alice", tr.FunctionKey}
			tid := "exact-" + tr.Name
			if r := alice.do(t, tr, "POST", "/api/threads", `{"thread_id":"`+tid+`"}`); r.status != 200 {
				t.Fatalf("alice create: %d %s", r.status, r.body)
			}
			for _, id := range []string{"alice\u00a0", "\u3000alice", "alice\u2028"} {
				lookalike := user{id, tr.FunctionKey}
				if r := lookalike.do(t, tr, "GET", "/api/threads/"+tid, ""); r.status != 400 || r.body != detail(apierror.InvalidIdentityMessage) {
					t.Errorf("%q get alice's thread: %d %s, want 400", id, r.status, r.body)
				}
				if r := lookalike.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn(tid)); r.status != 400 ||
					r.body != `{"error":"error","detail":"`+apierror.InvalidIdentityMessage+`"}` {
					t.Errorf("%q invoke on alice's thread: %d %s, want 400", id, r.status, r.body)
				}
			}
			// An identity with a space inside is an identity, and not alice's either.
			if r := (user{"alice smith", tr.FunctionKey}).do(t, tr, "GET", "/api/threads/"+tid, ""); r.status != 404 {
				t.Errorf("'alice smith' get alice's thread: %d %s, want 404", r.status, r.body)
			}
		})
	}
}
