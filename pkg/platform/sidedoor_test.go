package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// isoServeStore is isoServe with isolation on (the identity header trusted from loopback)
// and the given thread store; it returns the chat graph too.
func isoServeStore(t *testing.T, store threads.Store) ([]funchosttest.Transport, *memGraph) {
	t.Helper()
	return isoServeOpts(t, Options{Threads: store})
}

// isoServeOpts is isoServeStore with the platform options given (Isolation is set here).
func isoServeOpts(t *testing.T, opts Options) ([]funchosttest.Transport, *memGraph) {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	chat := newMemGraph()
	if err := app.Register(chat, "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.Isolation = iso
	svc, err := Mount(app, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return funchosttest.Transports(t, app.FunctionApp()), chat
}

// TestIsolation_DroppedThread_RunsCreateIsClaimChecked_BothTransports: a thread whose record
// the bounded store dropped keeps its conversation in the graph; a run that creates its
// thread (if_not_exists create on runs/wait, runs/stream and runs) goes through the same
// claim check as POST /api/threads, so another identity gets 409 and never reads or
// continues the conversation.
func TestIsolation_DroppedThread_RunsCreateIsClaimChecked_BothTransports(t *testing.T) {
	for _, trName := range []string{funchosttest.TransportStandalone, funchosttest.TransportEmulatedHost} {
		t.Run(trName, func(t *testing.T) {
			trs, chat := isoServeStore(t, threads.NewBoundedMemory(2))
			var tr funchosttest.Transport
			for _, x := range trs {
				if x.Name == trName {
					tr = x
				}
			}
			alice, bob := user{"alice", tr.FunctionKey}, user{"bob", tr.FunctionKey}
			tid := "conv-" + tr.Name
			if r := alice.do(t, tr, "POST", "/api/threads", `{"thread_id":"`+tid+`"}`); r.status != 200 {
				t.Fatalf("alice create: %d %s", r.status, r.body)
			}
			if r := alice.do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"chat","input":{"secret":"alice's"}}`); r.status != 200 {
				t.Fatalf("alice run: %d %s", r.status, r.body)
			}
			// Two more of alice's threads: the bound of 2 drops the record of her oldest.
			for range 2 {
				if r := alice.do(t, tr, "POST", "/api/threads", `{}`); r.status != 200 {
					t.Fatalf("alice create: %d %s", r.status, r.body)
				}
			}
			if r := alice.do(t, tr, "GET", "/api/threads/"+tid, ""); r.status != 404 {
				t.Fatalf("the record was not dropped: %d %s", r.status, r.body)
			}
			if _, err := chat.GetState(t.Context(), tid); err != nil {
				t.Fatalf("the conversation is not kept: %v", err)
			}
			taken := detail("Thread '" + tid + "' already exists")
			for _, route := range []string{"runs/wait", "runs/stream", "runs"} {
				r := bob.do(t, tr, "POST", "/api/threads/"+tid+"/"+route, `{"assistant_id":"chat","if_not_exists":"create","input":{"from":"bob"}}`)
				if r.status != 409 || r.body != taken || strings.Contains(r.body, "alice's") {
					t.Errorf("bob %s with if_not_exists create on a dropped thread: %d %s, want 409 %s", route, r.status, r.body, taken)
				}
			}
			if r := bob.do(t, tr, "GET", "/api/threads/"+tid+"/state", ""); r.status != 404 {
				t.Errorf("bob reads the dropped thread's state: %d %s", r.status, r.body)
			}
			if st, err := chat.GetState(t.Context(), tid); err != nil || strings.Contains(fmt.Sprint(st.Values), "bob") {
				t.Errorf("bob's input reached the dropped thread: %+v %v", st.Values, err)
			}
			// A fresh id is bob's as before, on every route.
			for _, route := range []string{"runs/wait", "runs/stream", "runs"} {
				fresh := "bob-" + strings.ReplaceAll(route, "/", "-") + "-" + tr.Name
				if r := bob.do(t, tr, "POST", "/api/threads/"+fresh+"/"+route, `{"assistant_id":"chat","if_not_exists":"create"}`); r.status != 200 {
					t.Errorf("bob %s on a fresh id: %d %s", route, r.status, r.body)
				}
			}
		})
	}
}

// keptDurable is a durable assistant "support" that keeps a run for the thread ids of kept.
type keptDurable struct{ kept map[string]bool }

func (d keptDurable) Graphs() []host.GraphInfo { return []host.GraphInfo{{Name: "support"}} }
func (d keptDurable) Run(context.Context, DurableRunRequest) (DurableState, error) {
	return DurableState{Values: json.RawMessage(`{"approved":true}`)}, nil
}
func (d keptDurable) State(_ context.Context, tid string) (DurableState, error) {
	if !d.kept[tid] {
		return DurableState{}, host.ErrThreadNotFound
	}
	return DurableState{ID: "1", Values: json.RawMessage(`{"ticket":"alice's"}`)}, nil
}
func (d keptDurable) History(ctx context.Context, tid string) ([]DurableState, error) {
	st, err := d.State(ctx, tid)
	return []DurableState{st}, err
}

// TestIsolation_DroppedDurableThread_NoSideDoor_BothTransports: a durable run kept for a
// thread id without a record is nobody's to claim on any thread-creating route: the hosting
// routes' invoke (which creates the platform thread) answers 404, the platform's 409.
func TestIsolation_DroppedDurableThread_NoSideDoor_BothTransports(t *testing.T) {
	trs, _ := isoServeOpts(t, Options{Threads: threads.NewMemory(), Durable: keptDurable{kept: map[string]bool{"dur-1": true}}})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			bob := user{"bob", tr.FunctionKey}
			if r := bob.do(t, tr, "POST", "/api/graphs/chat/invoke", invokeOn("dur-1")); r.status != 404 || r.body != nativeNotFound("dur-1") {
				t.Errorf("bob invoke on a kept durable thread: %d %s, want 404", r.status, r.body)
			}
			if r := bob.do(t, tr, "GET", "/api/threads/dur-1", ""); r.status != 404 {
				t.Errorf("bob got a record for the kept durable thread: %d %s", r.status, r.body)
			}
			for _, route := range []string{"runs/wait", "runs"} {
				r := bob.do(t, tr, "POST", "/api/threads/dur-1/"+route, `{"assistant_id":"support","if_not_exists":"create"}`)
				if r.status != 409 || r.body != detail("Thread 'dur-1' already exists") {
					t.Errorf("bob %s on a kept durable thread: %d %s, want 409", route, r.status, r.body)
				}
			}
		})
	}
}

// TestIsolation_ThreadBound_PerIdentity_BothTransports: the thread store's bound is per
// identity: alice creating as many threads as the whole store holds drops her own oldest,
// and bob's older thread stays his (200, not 404).
func TestIsolation_ThreadBound_PerIdentity_BothTransports(t *testing.T) {
	const bound = 40
	trs, _ := isoServeStore(t, threads.NewBoundedMemory(bound))
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			alice, bob := user{"alice", tr.FunctionKey}, user{"bob", tr.FunctionKey}
			bobOld := "bob-old-" + tr.Name
			if r := bob.do(t, tr, "POST", "/api/threads", `{"thread_id":"`+bobOld+`"}`); r.status != 200 {
				t.Fatalf("bob create: %d %s", r.status, r.body)
			}
			for range bound {
				if r := alice.do(t, tr, "POST", "/api/threads", `{}`); r.status != 200 {
					t.Fatalf("alice create: %d %s", r.status, r.body)
				}
			}
			if r := bob.do(t, tr, "POST", "/api/threads", `{}`); r.status != 200 {
				t.Fatalf("bob's next create: %d %s", r.status, r.body)
			}
			if r := bob.do(t, tr, "GET", "/api/threads/"+bobOld, ""); r.status != 200 {
				t.Errorf("bob's older thread after alice's load: %d %s, want 200", r.status, r.body)
			}
			if r := alice.do(t, tr, "POST", "/api/threads/count", `{}`); r.status != 200 || r.body != fmt.Sprint(bound/4) {
				t.Errorf("alice's threads: %d %s, want her share %d", r.status, r.body, bound/4)
			}
		})
	}
}
