package launch

import (
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/engine"
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
