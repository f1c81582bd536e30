//go:build integration

package launch_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationSideDoor_ThreadRecordGone_EveryCreateIsClaimChecked: on the Azure stores
// FromEnv picks (threads in Table storage, echo_agent's checkpoints in Blob storage, durable
// runs in Table storage), with isolation on, a thread whose record went without its state
// (deleted by an older release, or a threadless run's temporary thread whose checkpoints
// could not be deleted) is nobody's to claim: bob's if_not_exists create on runs/wait,
// runs/stream and runs, his thread create and his hosting invoke are all refused, for the
// conversation a hosted graph keeps and for the durable run an assistant keeps, and alice's
// state is left as it was.
func TestIntegrationSideDoor_ThreadRecordGone_EveryCreateIsClaimChecked(t *testing.T) {
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		launch.EnvStorage:           azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix:     azuritetest.UniqueName("sd"),
		"FUNCGRAPH_USER_ISOLATION":  "on",
		"FUNCGRAPH_IDENTITY_HEADER": isolation.PrincipalIDHeader,
		"FUNCGRAPH_TRUSTED_PROXIES": "127.0.0.1/32",
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !s.Durable.Azure || s.Threads == nil || s.Checkpoints == nil {
		t.Fatal("FromEnv did not pick the Azure stores")
	}
	graphs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	a, err := launch.Assemble(s, launch.Spec{
		Hosted:  []launch.Hosted{{Name: echoagent.Name, Graph: echoagent.New(echoagent.Options{Checkpointer: s.Checkpoints})}},
		Durable: graphs, Platform: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	for _, tr := range funchosttest.Transports(t, a.Host.FunctionApp()) {
		t.Run(tr.Name, func(t *testing.T) {
			app := tenantApp{a: a, s: s, tr: tr}
			chat, ticket := "chat-"+tr.Name, "ticket-"+tr.Name
			for tid, run := range map[string]string{
				chat:   `{"assistant_id":"` + echoagent.Name + `","input":{"messages":[{"role":"user","content":"alice's secret"}]}}`,
				ticket: `{"assistant_id":"support_agent","input":{"user_message":"refund alice's secret"}}`,
			} {
				if code, body := app.as(t, "alice", "POST", "/api/threads", `{"thread_id":"`+tid+`"}`); code != 200 {
					t.Fatalf("alice's thread %s: %d %.200s", tid, code, body)
				}
				if code, body := app.as(t, "alice", "POST", "/api/threads/"+tid+"/runs/wait", run); code != 200 || !strings.Contains(body, "alice's secret") {
					t.Fatalf("alice's run on %s: %d %.300s", tid, code, body)
				}
				// The record goes, its state stays.
				if err := s.Threads.Delete(t.Context(), tid); err != nil {
					t.Fatal(err)
				}
			}
			taken := func(tid string) string { return `{"detail": "Thread '` + tid + `' already exists"}` }
			for tid, assistant := range map[string]string{chat: echoagent.Name, ticket: "support_agent"} {
				for _, route := range []string{"runs/wait", "runs/stream", "runs"} {
					code, body := app.as(t, "bob", "POST", "/api/threads/"+tid+"/"+route,
						`{"assistant_id":"`+assistant+`","if_not_exists":"create","input":{"messages":[{"role":"user","content":"bob"}],"user_message":"bob"}}`)
					if code != 409 || body != taken(tid) {
						t.Errorf("bob's %s with if_not_exists create on %s: %d %.300s, want 409", route, tid, code, body)
					}
				}
				if code, body := app.as(t, "bob", "POST", "/api/threads", `{"thread_id":"`+tid+`"}`); code != 409 || body != taken(tid) {
					t.Errorf("bob's create of %s: %d %.300s, want 409", tid, code, body)
				}
				for _, path := range []string{"/api/threads/" + tid, "/api/threads/" + tid + "/state"} {
					if code, body := app.as(t, "bob", "GET", path, ""); code != 404 {
						t.Errorf("bob's GET %s: %d %.300s, want 404", path, code, body)
					}
				}
			}
			if code, body := app.as(t, "bob", "POST", "/api/graphs/"+echoagent.Name+"/invoke",
				`{"input":{"messages":[{"role":"user","content":"bob"}]},"config":{"configurable":{"thread_id":"`+chat+`"}}}`); code != 404 || strings.Contains(body, "alice") {
				t.Errorf("bob's invoke on %s: %d %.300s, want 404", chat, code, body)
			}
			// alice's conversation is as she left it: her message and its echo, nothing of bob's.
			if code, body := app.as(t, master, "GET", "/api/graphs/"+echoagent.Name+"/threads/"+chat+"/state", ""); code != 200 ||
				strings.Count(body, "alice's secret") != 2 || strings.Contains(body, `"bob"`) {
				t.Errorf("alice's conversation after bob's tries: %d %.300s", code, body)
			}
		})
	}
}
