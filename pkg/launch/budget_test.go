package launch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func TestBudgetFromEnv_DefaultsAndSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    membudget.Limits
		wantErr string
	}{
		{name: "default", want: membudget.Limits{Total: 128 << 20, PerIdentity: 32 << 20}},
		{name: "total in MiB", env: map[string]string{envMemoryBudget: " 512MiB "}, want: membudget.Limits{Total: 512 << 20, PerIdentity: 128 << 20}},
		{name: "total in bytes, share in KiB", env: map[string]string{envMemoryBudget: "8388608", envMemoryBudgetPerIdentity: "1024KiB"},
			want: membudget.Limits{Total: 8 << 20, PerIdentity: 1 << 20}},
		{name: "GiB", env: map[string]string{envMemoryBudget: "1 GiB", envMemoryBudgetPerIdentity: "1GiB"}, want: membudget.Limits{Total: 1 << 30, PerIdentity: 1 << 30}},
		{name: "too small", env: map[string]string{envMemoryBudget: "1MiB"}, wantErr: envMemoryBudget},
		{name: "not a size", env: map[string]string{envMemoryBudget: "lots"}, wantErr: envMemoryBudget},
		{name: "unknown unit", env: map[string]string{envMemoryBudget: "128MB"}, wantErr: envMemoryBudget},
		{name: "share past total", env: map[string]string{envMemoryBudgetPerIdentity: "129MiB"}, wantErr: envMemoryBudgetPerIdentity},
		{name: "share zero", env: map[string]string{envMemoryBudgetPerIdentity: "0"}, wantErr: envMemoryBudgetPerIdentity},
		{name: "overflow", env: map[string]string{envMemoryBudget: "9999999999999GiB"}, wantErr: envMemoryBudget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := budgetFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr+": ") {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || b.Limits() != tc.want {
				t.Fatalf("limits = %+v, %v; want %+v", b.Limits(), err, tc.want)
			}
		})
	}
}

// Without storage every in-memory store shares the budget; on Azure Storage there is none.
func TestFromEnv_EmbeddedDefault_StoresShareTheBudget(t *testing.T) {
	t.Parallel()
	env := map[string]string{envMemoryBudget: "16MiB"}
	s, err := FromEnv(t.Context(), func(k string) string { return env[k] }, ModeServe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.MemoryBudget == nil || s.MemoryBudget.Limits().Total != 16<<20 || s.Threads == nil || s.Checkpoints == nil {
		t.Fatalf("embedded default: budget %v, threads %v, checkpoints %v", s.MemoryBudget, s.Threads, s.Checkpoints)
	}
	ctx := t.Context()
	used := s.MemoryBudget.Used()
	grew := func(what string) {
		t.Helper()
		if now := s.MemoryBudget.Used(); now <= used {
			t.Fatalf("%s: the budget holds %d bytes, as before", what, now)
		}
		used = s.MemoryBudget.Used()
	}
	if err := s.Durable.Payloads.Put(ctx, "run-1/n/p", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	grew("a payload")
	if _, err := s.Durable.Store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert,
		Entity: engine.Entity{PartitionKey: "run-1", RowKey: "r", Properties: map[string]any{"V": "x"}}}}); err != nil {
		t.Fatal(err)
	}
	grew("a run row")
	now := time.Now()
	if err := s.Threads.Create(ctx, threads.Thread{ThreadID: "t", CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle}); err != nil {
		t.Fatal(err)
	}
	grew("a thread")
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelVersions: map[string]string{}}
	if err := s.Checkpoints.Put(ctx, "t", "", cp, nil); err != nil {
		t.Fatal(err)
	}
	grew("a checkpoint")
}

// checkpointedEcho is a hosted graph with a checkpointer that stores nothing.
type checkpointedEcho struct{}

func (checkpointedEcho) Invoke(_ context.Context, req host.Request) (any, error) {
	return json.RawMessage(req.Input), nil
}
func (checkpointedEcho) HasCheckpointer() bool { return true }

// Assemble hands the settings' memory budget to the hosting routes, the platform routes and
// the runs API: with 40 KiB left for new work, a body padded with 60 KiB of whitespace (which
// the stores would not keep) is refused 507 on each by its declared length, and an unpadded
// one is served.
func TestAssemble_PassesMemoryBudgetToEveryRoute(t *testing.T) {
	s, err := FromEnv(t.Context(), func(k string) string { return map[string]string{envMemoryBudget: "4MiB"}[k] }, ModeServe, funchosttest.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Assemble(s, Spec{Platform: true, Durable: graphs, Hosted: []Hosted{{Name: "chat", Graph: checkpointedEcho{}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b := s.MemoryBudget
	limit := b.Limits().Total
	if err := b.Grow(t.Context(), "", limit-limit/8-40<<10); err != nil { // the runs' steps
		t.Fatal(err)
	}
	h := a.Host.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}})
	send := func(path, body string) (int, string) {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("x-functions-key", "k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	pad := strings.Repeat(" ", 60<<10)
	for _, c := range []struct{ path, body string }{
		{"/api/graphs/data_pipeline/runs", `{"input":{"source_url":"s"}}`},
		{"/api/threads", `{"metadata":{"topic":"t"}}`},
		{"/api/graphs/chat/invoke", `{"input":{"m":"hi"},"config":{"configurable":{"thread_id":"t1"}}}`},
	} {
		if code, body := send(c.path, c.body[:len(c.body)-1]+pad+"}"); code != http.StatusInsufficientStorage {
			t.Errorf("%s padded past the room left: %d %.200s, want 507", c.path, code, body)
		}
		if code, body := send(c.path, c.body); code >= 300 {
			t.Errorf("%s: %d %.200s, want served", c.path, code, body)
		}
	}
}
