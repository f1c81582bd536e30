package memory_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

func newBudget(t *testing.T, total, perIdentity int64) *membudget.Budget {
	t.Helper()
	b, err := membudget.New(membudget.Limits{Total: total, PerIdentity: perIdentity})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A store with a budget passes the same suites, and accounts exactly what it holds after them.
func TestStore_Budget_ConformanceAndExactAccounting(t *testing.T) {
	t.Parallel()
	b := newBudget(t, 1<<30, 0)
	s, p := memory.NewStore(memory.WithBudget(b)), memory.NewPayloadStore(memory.WithBudget(b))
	t.Run("store", func(t *testing.T) { enginetest.RunStoreTests(t, func(*testing.T) engine.Store { return s }) })
	t.Run("payloads", func(t *testing.T) {
		enginetest.RunPayloadStoreTests(t, func(*testing.T) engine.PayloadStore { return p })
	})
	if got, want := b.Used(), memory.HeldBytes(s, p); got != want || want == 0 {
		t.Fatalf("accounted %d bytes, the stores hold %d", got, want)
	}
}

func insert(pk, rk string, size int) []engine.Op {
	return []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: rk,
		Properties: map[string]any{"V": strings.Repeat("x", size)}}}}
}

// Past the total a write is refused as storage full, nothing is written, and the accounted bytes
// stay within the total; new work stops at 7/8 of it, a run's steps (no caller) go on to the
// total.
func TestStore_Budget_RefusesPastTotal_NothingWritten(t *testing.T) {
	t.Parallel()
	const total = 1 << 20
	b := newBudget(t, total, 0)
	s := memory.NewStore(memory.WithBudget(b))
	caller := membudget.NewWork(t.Context(), "")
	steps := t.Context()
	written := 0
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("1 000 rows of 30 000 bytes and no refusal")
		}
		pk := "run-" + strconv.Itoa(i)
		_, err := s.Submit(caller, insert(pk, "r", 30000))
		if err != nil {
			if !errors.Is(err, engine.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
				t.Fatalf("refusal = %v, want ErrStorageFull and membudget.ErrExceeded", err)
			}
			if _, gerr := s.Get(t.Context(), pk, "r"); !errors.Is(gerr, engine.ErrNotFound) {
				t.Fatalf("a refused insert was stored: %v", gerr)
			}
			break
		}
		written++
	}
	if used := b.Used(); used > total-total/8 || used < total-total/8-40000 {
		t.Fatalf("new work stopped at %d bytes, want just under 7/8 of %d", used, total)
	}
	// A run's steps may use the last eighth, never more.
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("1 000 step rows of 30 000 bytes and no refusal")
		}
		_, err := s.Submit(steps, insert("run-0", "h000001-"+strconv.Itoa(i), 30000))
		if err != nil {
			if !errors.Is(err, membudget.ErrExceeded) {
				t.Fatal(err)
			}
			break
		}
	}
	if used := b.Used(); used > total || used < total-40000 {
		t.Fatalf("steps stopped at %d bytes, want just under %d", used, total)
	}
	if got, want := b.Used(), memory.HeldBytes(s, nil); got != want {
		t.Fatalf("accounted %d bytes, the store holds %d", got, want)
	}
	// Shrinking is never refused.
	if _, err := s.Submit(caller, []engine.Op{{Kind: engine.OpDelete, IfMatch: engine.ETagAny,
		Entity: engine.Entity{PartitionKey: "run-0", RowKey: "r"}}}); err != nil {
		t.Fatalf("delete past the budget: %v", err)
	}
	t.Logf("%d runs of 30 000 bytes admitted in a budget of %d bytes", written, total)
}

// A run's own rows and payloads count against the identity it was started for, whoever
// writes them later; the rows about many runs (the index) against the total only. One
// identity at its limit is refused while another is admitted.
func TestStore_Budget_PerIdentity(t *testing.T) {
	t.Parallel()
	const perIdentity = 256 << 10
	b := newBudget(t, 4<<20, perIdentity)
	s, p := memory.NewStore(memory.WithBudget(b)), memory.NewPayloadStore(memory.WithBudget(b))
	alice, eve := membudget.NewWork(t.Context(), "alice"), membudget.NewWork(t.Context(), "eve")
	if _, err := s.Submit(alice, insert("run-a", "r", 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(alice, insert("~runs-1", "0001_run-a", 100)); err != nil { // an index row
		t.Fatal(err)
	}
	aliceStart := b.UsedBy("alice")
	if _, err := s.Submit(t.Context(), insert("run-a", "h000001-0000000000000001", 5000)); err != nil { // a step
		t.Fatal(err)
	}
	if err := p.Put(context.Background(), "run-a/n1/state", make([]byte, 7000)); err != nil {
		t.Fatal(err)
	}
	if got := b.UsedBy("alice") - aliceStart; got < 12000 {
		t.Fatalf("alice's step and payload added %d bytes to her account, want ≥ 12 000", got)
	}
	if owner := s.RunOwner("run-a"); owner != "alice" {
		t.Fatalf("RunOwner(run-a) = %q, want alice", owner)
	}
	if b.UsedBy("") != 0 {
		t.Fatalf("%d bytes on the account of no identity, want 0 (the index counts against the total only)", b.UsedBy(""))
	}
	// Eve fills her share; Alice is still admitted.
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		_, err = s.Submit(eve, insert("run-e"+strconv.Itoa(i), "r", 30000))
	}
	var ex *membudget.ExceededError
	if !errors.As(err, &ex) || ex.Owner != "eve" {
		t.Fatalf("eve's refusal = %v, want her own limit", err)
	}
	if used := b.UsedBy("eve"); used > perIdentity-perIdentity/8 {
		t.Fatalf("eve holds %d bytes, past 7/8 of %d", used, perIdentity)
	}
	if _, err := s.Submit(alice, insert("run-a2", "r", 30000)); err != nil {
		t.Fatalf("alice refused after eve filled her share: %v", err)
	}
	if !s.Crowded("eve") || s.Crowded("alice") {
		t.Fatalf("Crowded(eve) = %v, Crowded(alice) = %v, want true, false", s.Crowded("eve"), s.Crowded("alice"))
	}
	// Purging a run frees its identity's bytes and forgets whose it was.
	if _, err := p.DeletePrefix(t.Context(), "run-a/"); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"r", "h000001-0000000000000001"} {
		if _, err := s.Submit(t.Context(), []engine.Op{{Kind: engine.OpDelete, IfMatch: engine.ETagAny,
			Entity: engine.Entity{PartitionKey: "run-a", RowKey: rk}}}); err != nil {
			t.Fatal(err)
		}
	}
	if owner := s.RunOwner("run-a"); owner != "" {
		t.Fatalf("RunOwner of a purged run = %q, want none", owner)
	}
	if got, want := b.Used(), memory.HeldBytes(s, p); got != want {
		t.Fatalf("accounted %d bytes, the stores hold %d", got, want)
	}
}

// A payload past the budget is refused as storage full, and the one it would replace is kept.
func TestPayloadStore_Budget_RefusesPastTotal(t *testing.T) {
	t.Parallel()
	b := newBudget(t, 1<<20, 0)
	p := memory.NewPayloadStore(memory.WithBudget(b))
	ctx := membudget.NewWork(t.Context(), "")
	if err := p.Put(ctx, "run-1/n/a", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	err := p.Put(ctx, "run-1/n/a", make([]byte, 1<<20))
	if !errors.Is(err, engine.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
		t.Fatalf("Put past the budget = %v, want ErrStorageFull and membudget.ErrExceeded", err)
	}
	if got, _ := p.Get(t.Context(), "run-1/n/a"); string(got) != "kept" {
		t.Fatalf("payload after a refused Put = %q, want kept", got)
	}
	if got, want := b.Used(), memory.HeldBytes(nil, p); got != want {
		t.Fatalf("accounted %d bytes, the store holds %d", got, want)
	}
}
