package host

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// mapOwners is a ThreadOwners over a map (thread id → owner).
type mapOwners struct {
	mu     sync.Mutex
	owners map[string]any
}

func (m *mapOwners) ThreadOwner(_ context.Context, tid string) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.owners[tid]
	if !ok {
		return nil, fmt.Errorf("thread %s: %w", tid, ErrThreadNotFound)
	}
	return o, nil
}

func (m *mapOwners) CreateThread(_ context.Context, tid, owner string) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.owners[tid]; ok {
		return o, nil
	}
	m.owners[tid] = owner
	return owner, nil
}

func (m *mapOwners) owner(tid string) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.owners[tid]
	return o, ok
}

// isoApp serves a checkpointed graph "chat" (it holds state for thread "legacy" only) and a
// plain graph "plain" with isolation on (X-MS-CLIENT-PRINCIPAL-ID believed from 127.0.0.1
// standalone) through both transports; owners nil means no thread record.
func isoApp(t *testing.T, owners ThreadOwners) []funchosttest.Transport {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	chat := &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true}, state: func(_ context.Context, tid string) (StateView, error) {
		if tid == "legacy" {
			return StateView{Values: map[string]any{"messages": []any{"secret"}}, CreatedAt: time.Unix(1, 0)}, nil
		}
		return StateView{}, nil // a checkpointer that never saw the thread
	}}
	a := testApp(t, Options{Isolation: iso}, map[string]InvocableGraph{"chat": chat, "plain": &fakeGraph{}}, nil)
	if owners != nil {
		a.SetIsolation(iso, owners)
	}
	return funchosttest.Transports(t, a.FunctionApp())
}

// callAs sends a request as identity id ("" none) with key.
func callAs(t *testing.T, tr funchosttest.Transport, id, key, method, path, body string) response {
	t.Helper()
	if id == "" {
		return callHeaders(t, tr, method, path, body, key)
	}
	return callHeaders(t, tr, method, path, body, key, isolation.PrincipalIDHeader, id)
}

func threaded(tid string) string {
	return `{"input":{"n":1},"config":{"configurable":{"thread_id":"` + tid + `"}}}`
}

// TestIsolation_Hosting_ThreadOwners_BothTransports: with a record of owners, a new thread id
// becomes the caller's, another identity's thread (and a thread the graph holds from before)
// answers as a missing one, and the master key bypasses.
func TestIsolation_Hosting_ThreadOwners_BothTransports(t *testing.T) {
	owners := &mapOwners{owners: map[string]any{"bobs": "bob", "ownerless": nil}}
	for _, tr := range isoApp(t, owners) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			tid := "alice-" + tr.Name
			for _, path := range []string{"/api/graphs/chat/invoke", "/api/graphs/chat/stream"} {
				if r := callAs(t, tr, "alice", key, "POST", path, threaded(tid)); r.status != 200 {
					t.Fatalf("alice %s on a new thread: %d %s", path, r.status, r.body)
				}
			}
			if o, ok := owners.owner(tid); !ok || o != "alice" {
				t.Fatalf("the new thread's owner = %v (recorded %v), want alice", o, ok)
			}
			if r := callAs(t, tr, "alice", key, "GET", "/api/graphs/chat/threads/"+tid+"/state", ""); r.status != 200 {
				t.Errorf("alice state: %d %s", r.status, r.body)
			}
			for _, other := range []string{tid, "bobs", "ownerless", "legacy"} {
				want := errBody("Thread '" + other + "' not found")
				for _, c := range []struct{ method, path, body string }{
					{"POST", "/api/graphs/chat/invoke", threaded(other)},
					{"POST", "/api/graphs/chat/stream", threaded(other)},
					{"POST", "/api/graphs/plain/invoke", threaded(other)},
					{"GET", "/api/graphs/chat/threads/" + other + "/state", ""},
				} {
					id := "carol"
					if other != tid {
						id = "alice"
					}
					if r := callAs(t, tr, id, key, c.method, c.path, c.body); r.status != 404 || r.body != want {
						t.Errorf("%s %s %s: %d %s, want 404 %s", id, c.method, c.path, r.status, r.body, want)
					}
				}
			}
			if _, ok := owners.owner("legacy"); ok {
				t.Error("a thread the graph held before was claimed")
			}
			for _, other := range []string{"bobs", "legacy", tid} {
				if r := callAs(t, tr, "", tr.MasterKey, "GET", "/api/graphs/chat/threads/"+other+"/state", ""); r.status != 200 {
					t.Errorf("master key state of %s: %d %s", other, r.status, r.body)
				}
			}
			if r := callAs(t, tr, "", tr.MasterKey, "POST", "/api/graphs/chat/invoke", threaded("admin-"+tr.Name)); r.status != 200 {
				t.Errorf("master key invoke: %d %s", r.status, r.body)
			}
			if _, ok := owners.owner("admin-" + tr.Name); ok {
				t.Error("the master key's thread was recorded")
			}
		})
	}
}

// TestIsolation_Hosting_NoThreadStore_BothTransports: without a record of owners (no
// platform routes), thread ids are the master key's only; thread-less invokes run for any
// identified caller; no identity is 401.
func TestIsolation_Hosting_NoThreadStore_BothTransports(t *testing.T) {
	for _, tr := range isoApp(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			if r := callAs(t, tr, "alice", key, "POST", "/api/graphs/plain/invoke", `{"input":{"n":1}}`); r.status != 200 || r.body != `{"output":{"n":1}}` {
				t.Errorf("alice thread-less invoke: %d %s", r.status, r.body)
			}
			forbidden := errBody(msgNoThreadStore)
			for _, c := range []struct{ method, path, body string }{
				{"POST", "/api/graphs/chat/invoke", threaded("t1")},
				{"POST", "/api/graphs/chat/stream", threaded("t1")},
				{"POST", "/api/graphs/plain/invoke", threaded("t1")},
				{"GET", "/api/graphs/chat/threads/t1/state", ""},
			} {
				if r := callAs(t, tr, "alice", key, c.method, c.path, c.body); r.status != 403 || r.body != forbidden {
					t.Errorf("alice %s %s: %d %s, want 403 %s", c.method, c.path, r.status, r.body, forbidden)
				}
				if r := callAs(t, tr, "", key, c.method, c.path, c.body); r.status != 401 || r.body != errBody(msgNoIdentity) {
					t.Errorf("no identity %s %s: %d %s, want 401", c.method, c.path, r.status, r.body)
				}
				if r := callAs(t, tr, "", tr.MasterKey, c.method, c.path, c.body); r.status != 200 {
					t.Errorf("master key %s %s: %d %s", c.method, c.path, r.status, r.body)
				}
			}
			if r := callAs(t, tr, "", key, "POST", "/api/graphs/plain/invoke", `{"input":{}}`); r.status != 401 {
				t.Errorf("no identity, thread-less: %d %s, want 401", r.status, r.body)
			}
		})
	}
}

// TestIsolation_Hosting_UntrustedPeer: standalone, the identity header from a peer that is
// not a trusted proxy is refused (403); under the host it is App Service's identity.
func TestIsolation_Hosting_UntrustedPeer(t *testing.T) {
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	a := testApp(t, Options{Isolation: iso}, map[string]InvocableGraph{"plain": &fakeGraph{}}, nil)
	for _, tr := range funchosttest.Transports(t, a.FunctionApp()) {
		r := callAs(t, tr, "alice", tr.FunctionKey, "POST", "/api/graphs/plain/invoke", `{"input":{}}`)
		want := 200
		if tr.Name == funchosttest.TransportStandalone {
			want = 403
		}
		if r.status != want || (want == 403 && r.body != errBody(msgUntrustedProxy)) {
			t.Errorf("%s: %d %s, want %d", tr.Name, r.status, r.body, want)
		}
	}
}

// TestIsolation_Hosting_Off: without isolation the identity headers mean nothing and a
// thread id is anyone's.
func TestIsolation_Hosting_Off(t *testing.T) {
	a := testApp(t, Options{}, map[string]InvocableGraph{"chat": &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true}}}, nil)
	for _, tr := range funchosttest.Transports(t, a.FunctionApp()) {
		for _, id := range []string{"", "alice"} {
			if r := callAs(t, tr, id, tr.FunctionKey, "POST", "/api/graphs/chat/invoke", threaded("t1")); r.status != 200 {
				t.Errorf("%s as %q: %d %s", tr.Name, id, r.status, r.body)
			}
		}
	}
}
