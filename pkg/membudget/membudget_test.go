package membudget_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

func TestLimits_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		l    membudget.Limits
		ok   bool
	}{
		{"total only", membudget.Limits{Total: 1}, true},
		{"both", membudget.Limits{Total: 10, PerIdentity: 10}, true},
		{"no total", membudget.Limits{}, false},
		{"negative identity", membudget.Limits{Total: 10, PerIdentity: -1}, false},
		{"identity past total", membudget.Limits{Total: 10, PerIdentity: 11}, false},
	}
	for _, tt := range tests {
		if _, err := membudget.New(tt.l); (err == nil) != tt.ok {
			t.Errorf("%s: New = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// New work is admitted within 7/8 of each limit, other writes within the whole limit; a
// refusal accounts nothing and says whose limit it hit.
func TestBudget_Grow_Thresholds(t *testing.T) {
	t.Parallel()
	b, _ := membudget.New(membudget.Limits{Total: 800, PerIdentity: 400})
	caller := membudget.NewWork(t.Context(), "alice")
	tests := []struct {
		name    string
		ctx     context.Context
		owner   string
		n       int64
		refuser string // whose limit refuses; "-" none
	}{
		{"new work within 7/8 of her limit", caller, "alice", 350, "-"},
		{"new work past 7/8 of her limit", caller, "alice", 1, "alice"},
		{"a step within her limit", t.Context(), "alice", 50, "-"},
		{"a step past her limit", t.Context(), "alice", 1, "alice"},
		{"shrinking at the limit", t.Context(), "alice", -100, "-"},
		{"no identity: total only", caller, "", 400, "-"},
		{"new work past 7/8 of the total", caller, "", 1, ""},
		{"a step within the total", t.Context(), "", 100, "-"},
		{"a step past the total", t.Context(), "", 1, ""},
	}
	for _, tt := range tests {
		before := b.Used()
		err := b.Grow(tt.ctx, tt.owner, tt.n)
		var ex *membudget.ExceededError
		switch {
		case tt.refuser == "-" && err != nil:
			t.Fatalf("%s: %v", tt.name, err)
		case tt.refuser != "-" && (!errors.As(err, &ex) || !errors.Is(err, membudget.ErrExceeded) || ex.Owner != tt.refuser):
			t.Fatalf("%s: err = %v, want the limit of %q", tt.name, err, tt.refuser)
		case tt.refuser != "-" && b.Used() != before:
			t.Fatalf("%s: a refusal accounted %d bytes", tt.name, b.Used()-before)
		}
	}
	if b.Used() != 800 || b.UsedBy("alice") != 300 || b.UsedBy("") != 500 {
		t.Fatalf("used %d, alice %d, none %d; want 800, 300, 500", b.Used(), b.UsedBy("alice"), b.UsedBy(""))
	}
}

// Admits answers as a write of new work would (7/8 of the total, then of the owner's limit),
// counts n < 1 as one byte, and accounts nothing.
func TestBudget_Admits_AsNewWorkWould(t *testing.T) {
	t.Parallel()
	b, _ := membudget.New(membudget.Limits{Total: 800, PerIdentity: 400})
	alice := membudget.NewWork(t.Context(), "alice")
	if err := b.Grow(alice, "alice", 340); err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 300); err != nil { // a step: total at 640 of 700 for new work
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		ctx     context.Context
		n       int64
		refuser string // whose limit refuses; "-" none
	}{
		{"alice within 7/8 of her limit", alice, 5, "-"},
		{"alice up to 7/8 of her limit", alice, 10, "-"},
		{"alice past 7/8 of her limit", alice, 11, "alice"},
		{"no identity within 7/8 of the total", t.Context(), 60, "-"},
		{"no identity past 7/8 of the total", t.Context(), 61, ""},
		{"the total is checked first", alice, 61, ""},
		{"an unknown length within", t.Context(), -1, "-"},
	}
	for _, tt := range tests {
		err := b.Admits(tt.ctx, tt.n)
		var ex *membudget.ExceededError
		switch {
		case tt.refuser == "-" && err != nil:
			t.Fatalf("%s: %v", tt.name, err)
		case tt.refuser != "-" && (!errors.As(err, &ex) || !errors.Is(err, membudget.ErrExceeded) || ex.Owner != tt.refuser || !ex.NewWork):
			t.Fatalf("%s: err = %v, want the new-work limit of %q", tt.name, err, tt.refuser)
		}
	}
	if b.Used() != 640 || b.UsedBy("alice") != 340 {
		t.Fatalf("used %d, alice %d; want 640, 340: Admits accounted bytes", b.Used(), b.UsedBy("alice"))
	}
	if err := b.Grow(t.Context(), "", 60); err != nil { // a step fills new work's share
		t.Fatal(err)
	}
	if err := b.Admits(t.Context(), 0); !errors.Is(err, membudget.ErrExceeded) {
		t.Fatalf("Admits(0) at 7/8 of the total = %v, want refused", err)
	}
}

// A scope counts against the owner of the write that first gave it bytes, until it holds none.
func TestBudget_Charge_ScopeKeepsItsOwner(t *testing.T) {
	t.Parallel()
	b, _ := membudget.New(membudget.Limits{Total: 1000, PerIdentity: 500})
	if err := b.Charge(membudget.NewWork(t.Context(), "alice"), "run/1", 100); err != nil {
		t.Fatal(err)
	}
	if err := b.Charge(membudget.NewWork(t.Context(), "bob"), "run/1", 50); err != nil { // e.g. an admin's event
		t.Fatal(err)
	}
	if err := b.Charge(t.Context(), "run/1", 25); err != nil { // a step
		t.Fatal(err)
	}
	if owner, ok := b.ScopeOwner("run/1"); owner != "alice" || !ok || b.UsedBy("alice") != 175 || b.UsedBy("bob") != 0 {
		t.Fatalf("run/1 is %q's (%v); alice %d, bob %d; want alice's, 175, 0", owner, ok, b.UsedBy("alice"), b.UsedBy("bob"))
	}
	if err := b.Charge(t.Context(), "", 60); err != nil { // an index row
		t.Fatal(err)
	}
	if err := b.Charge(t.Context(), "run/1", -175); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.ScopeOwner("run/1"); ok || b.UsedBy("alice") != 0 || b.Used() != 60 {
		t.Fatalf("after freeing run/1: held %v, alice %d, total %d; want false, 0, 60", ok, b.UsedBy("alice"), b.Used())
	}
}

func TestBudget_Crowded_PastThreeQuarters(t *testing.T) {
	t.Parallel()
	b, _ := membudget.New(membudget.Limits{Total: 2000, PerIdentity: 400})
	_ = b.Grow(t.Context(), "alice", 300)
	_ = b.Grow(t.Context(), "", 1200)
	if b.Crowded("alice") || b.Crowded("") {
		t.Fatal("crowded at exactly three quarters")
	}
	_ = b.Grow(t.Context(), "alice", 1)
	if !b.Crowded("") {
		t.Fatal("no identity: not crowded with the total past three quarters")
	}
	if !b.Crowded("alice") || !b.Crowded("") || b.Crowded("bob") {
		t.Fatalf("crowded: alice %v, none %v, bob %v; want true, true, false", b.Crowded("alice"), b.Crowded(""), b.Crowded("bob"))
	}
}

// Concurrent growth never passes a limit, and what is freed comes back exactly.
func TestBudget_Concurrent_NeverPastLimits(t *testing.T) {
	t.Parallel()
	b, _ := membudget.New(membudget.Limits{Total: 10000, PerIdentity: 4000})
	owners := []string{"", "a", "b", "c"}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 31))
			var held []int64
			for range 2000 {
				n := r.Int64N(300) + 1
				owner := owners[w%len(owners)]
				if b.Grow(membudget.NewWork(context.Background(), owner), owner, n) == nil {
					held = append(held, n)
				}
				if used := b.Used(); used > 10000 {
					t.Errorf("total %d past 10 000", used)
				}
				if len(held) > 0 && r.IntN(2) == 0 {
					_ = b.Grow(context.Background(), owner, -held[0])
					held = held[1:]
				}
			}
			for _, n := range held {
				_ = b.Grow(context.Background(), owners[w%len(owners)], -n)
			}
		})
	}
	wg.Wait()
	if b.Used() != 0 {
		t.Fatalf("%d bytes left after every growth was freed", b.Used())
	}
}
