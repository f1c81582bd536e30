package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// callAs sends a request as identity id (the App Service header, trusted from loopback).
func callAs(t *testing.T, tr funchosttest.Transport, id, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(isolation.PrincipalIDHeader, id)
	req.Header.Set(isolation.PrincipalIDPHeader, "aad")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// TestIsolation_BackgroundRuns_BilledToOwner_BothTransports: a background run executes on the
// backend's workers, not in a request, yet its checkpoints belong to the thread's owner: they
// count against that identity, and the checkpointer's bound forgets that identity's oldest
// threads, never another's. Alice's background runs on more fresh threads than the
// checkpointer keeps leave Bob's conversation whole.
func TestIsolation_BackgroundRuns_BilledToOwner_BothTransports(t *testing.T) {
	const keep = 8
	budget, err := membudget.New(membudget.Limits{Total: 64 << 20, PerIdentity: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	saver := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: keep, Budget: budget})
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(echoagent.New(echoagent.Options{Checkpointer: saver}), "echo", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := platform.Mount(app, platform.Options{Threads: threads.NewMemory(), Isolation: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		t.Run(tr.Name, func(t *testing.T) {
			bobThread := "bob-" + tr.Name
			turn := `{"assistant_id":"echo","if_not_exists":"create","input":{"messages":[{"role":"user","content":"bob's secret"}]}}`
			if st, body := callAs(t, tr, "bob", "POST", "/api/threads/"+bobThread+"/runs/wait", turn); st != 200 {
				t.Fatalf("bob's turn: %d %s", st, body)
			}
			bobBackground := "bob-bg-" + tr.Name
			if st, body := callAs(t, tr, "bob", "POST", "/api/threads/"+bobBackground+"/runs", turn); st != 200 {
				t.Fatalf("bob's background turn: %d %s", st, body)
			}
			funchosttest.Eventually(t, "bob's background turn is kept", func() bool {
				st, body := callAs(t, tr, "bob", "GET", "/api/threads/"+bobBackground, "")
				return st == 200 && strings.Contains(body, `"status": "idle"`) && strings.Contains(body, "bob's secret")
			})
			for i := range keep + 2 {
				tid := fmt.Sprintf("alice-%s-%d", tr.Name, i)
				st, body := callAs(t, tr, "alice", "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"echo","if_not_exists":"create","input":{"messages":[{"role":"user","content":"hi"}]}}`)
				var run struct {
					RunID string `json:"run_id"`
				}
				if st != 200 || json.Unmarshal([]byte(body), &run) != nil {
					t.Fatalf("alice's background run %d: %d %s", i, st, body)
				}
				if st, body := callAs(t, tr, "alice", "GET", "/api/threads/"+tid+"/runs/"+run.RunID+"/join", ""); st != 200 {
					t.Fatalf("alice's join %d: %d %s", i, st, body)
				}
				o, held := budget.ScopeOwner("checkpoint/" + tid)
				if i == keep+1 && (!held || !strings.HasSuffix(o, "alice")) {
					t.Errorf("alice's background checkpoints count against %q (held %v), want alice", o, held)
				}
			}
			for _, tid := range []string{bobThread, bobBackground} {
				if st, body := callAs(t, tr, "bob", "GET", "/api/threads/"+tid+"/state", ""); st != 200 || !strings.Contains(body, "bob's secret") {
					t.Errorf("bob's conversation %s after alice's background runs: %d %s", tid, st, body)
				}
			}
		})
	}
}
