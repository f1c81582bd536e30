package platformruns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestBackgroundRuns_EmbeddedDefault_BilledToTheThreadsOwner: on the embedded default with
// isolation on, background runs execute on the engine's dispatcher, yet on behalf of their
// thread's owner: alice's background runs on more fresh threads than the checkpointer keeps
// (1 000) forget her own oldest threads, never bob's conversation, which he also wrote in the
// background, and their checkpoints count against alice.
func TestBackgroundRuns_EmbeddedDefault_BilledToTheThreadsOwner(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_USER_ISOLATION": "on", "FUNCGRAPH_IDENTITY_HEADER": isolation.PrincipalIDHeader,
		"FUNCGRAPH_TRUSTED_PROXIES": "127.0.0.1/32"}
	logger := slog.New(slog.DiscardHandler)
	s, err := launch.FromEnv(t.Context(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	app, err := exampleapp.Build(exampleapp.Config{Logger: logger, Durable: s.Durable, PlatformThreads: s.Threads,
		Checkpointer: s.Checkpoints, Isolation: s.Isolation, MemoryBudget: s.MemoryBudget})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	tr := funchosttest.Transports(t, app.FunctionApp)[0]
	as := func(id string) []string {
		return []string{isolation.PrincipalIDHeader, id, isolation.PrincipalIDPHeader, "aad", "Content-Type", "application/json"}
	}
	turn := func(content string) string {
		return `{"assistant_id":"echo_agent","if_not_exists":"create","input":{"messages":[{"role":"user","content":"` + content + `"}]}}`
	}
	background := func(id, tid, content string) {
		t.Helper()
		st, body := call(t, tr, "POST", "/api/threads/"+tid+"/runs", turn(content), as(id)...)
		var run struct {
			RunID string `json:"run_id"`
		}
		if st != 200 || json.Unmarshal([]byte(body), &run) != nil {
			t.Errorf("%s's background run on %s: %d %s", id, tid, st, body)
			return
		}
		if st, body := call(t, tr, "GET", "/api/threads/"+tid+"/runs/"+run.RunID+"/join", "", as(id)...); st != 200 {
			t.Errorf("%s's join on %s: %d %s", id, tid, st, body)
		}
	}
	background("bob", "bob-conversation", "bob's secret")
	const runs = checkpoint.DefaultMemoryMaxThreads + 10
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < runs; i += 8 {
				background("alice", fmt.Sprint("alice-", i), "hi")
			}
		})
	}
	wg.Wait()
	if st, body := call(t, tr, "GET", "/api/threads/bob-conversation/state", "", as("bob")...); st != 200 || !strings.Contains(body, "bob's secret") {
		t.Errorf("bob's conversation after alice's %d background runs: %d %s", runs, st, body)
	}
	if used := s.MemoryBudget.UsedBy("alice"); used == 0 {
		t.Errorf("alice's background runs hold nothing on her account")
	}
	if owner, held := s.MemoryBudget.ScopeOwner("checkpoint/alice-" + fmt.Sprint(runs-1)); !held || owner != "alice" {
		t.Errorf("alice's newest background checkpoints count against %q (held %v), want alice", owner, held)
	}
}
