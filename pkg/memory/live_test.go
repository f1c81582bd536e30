package memory_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// The in-memory twin passes the suite at the engine's own append limit (50 000 appends).
func TestLiveStore_Conformance(t *testing.T) {
	t.Parallel()
	shared := memory.NewLiveStore()
	enginetest.RunLiveStoreTests(t, func(*testing.T) engine.LiveStore { return shared }, enginetest.LiveSuiteOptions{})
}

// With a budget it passes the same suite, and accounts exactly what it holds after it.
func TestLiveStore_Budget_ConformanceAndExactAccounting(t *testing.T) {
	t.Parallel()
	b := newBudget(t, 1<<30, 0)
	l := memory.NewLiveStore(memory.WithBudget(b))
	enginetest.RunLiveStoreTests(t, func(*testing.T) engine.LiveStore { return l }, enginetest.LiveSuiteOptions{})
	if got, want := b.Used(), memory.HeldLiveBytes(l); got != want || want == 0 {
		t.Fatalf("accounted %d bytes, the store holds %d", got, want)
	}
	if _, err := l.DeletePrefix(t.Context(), "run"); err != nil {
		t.Fatal(err)
	}
	if b.Used() != 0 || l.Len() != 0 {
		t.Fatalf("after deleting every log: %d bytes accounted, %d logs", b.Used(), l.Len())
	}
}

// Past the budget an append is refused as storage full and the log keeps what it had; a
// run's logs count against the identity it was started for.
func TestLiveStore_Budget_RefusesPastTotal(t *testing.T) {
	t.Parallel()
	b := newBudget(t, 1<<20, 0)
	l := memory.NewLiveStore(memory.WithBudget(b))
	ctx := membudget.NewWork(t.Context(), "alice")
	const key = "run-1/n/live"
	at, err := l.Append(ctx, key, 0, []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	if b.UsedBy("alice") == 0 {
		t.Fatal("the log's first append is not on alice's account")
	}
	for err == nil {
		var n int64
		if n, err = l.Append(t.Context(), key, at, bytes.Repeat([]byte("x"), 64<<10)); err == nil {
			at = n
		}
	}
	if !errors.Is(err, engine.ErrStorageFull) || !errors.Is(err, membudget.ErrExceeded) {
		t.Fatalf("append past the budget = %v, want ErrStorageFull and membudget.ErrExceeded", err)
	}
	n, lerr := l.Length(t.Context(), key)
	if lerr != nil || n != at {
		t.Fatalf("Length after a refused append = %d, %v; want %d", n, lerr, at)
	}
	if got, want := b.Used(), memory.HeldLiveBytes(l); got != want || got > 1<<20 {
		t.Fatalf("accounted %d bytes, the store holds %d (budget %d)", got, want, 1<<20)
	}
	if _, err := l.DeletePrefix(t.Context(), "run-1/"); err != nil {
		t.Fatal(err)
	}
	if b.Used() != 0 || b.UsedBy("alice") != 0 {
		t.Fatalf("a purged log left %d bytes accounted (%d on alice's)", b.Used(), b.UsedBy("alice"))
	}
}
