package respbudget_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

// The bounds in order: one response (413), the identity's (429), the total (429); the master
// key's and isolation-off responses ("") count in the total only; a refusal holds nothing.
func TestBudget_Bounds(t *testing.T) {
	b := respbudget.New(respbudget.Limits{BytesPerResponse: 100, BytesPerIdentity: 150, BytesTotal: 200, StreamsPerIdentity: 1, StreamsTotal: 2})
	status := func(err error) int {
		if err == nil {
			return 0
		}
		return apierror.Status(err)
	}
	if _, err := b.Hold("a", 101); status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("one response past its bound: %v", err)
	}
	a1, err := b.Hold("a", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Hold("a", 51); status(err) != http.StatusTooManyRequests {
		t.Fatalf("past a's bound: %v", err)
	}
	admin, err := b.Hold("", 100)
	if err != nil {
		t.Fatalf("the master key within the total: %v", err)
	}
	if _, err := b.Hold("b", 1); status(err) != http.StatusTooManyRequests {
		t.Fatalf("past the total: %v", err)
	}
	if used, _ := b.Used(); used != 200 {
		t.Fatalf("used %d, want 200: refusals hold nothing", used)
	}
	a1.Release()
	a1.Release()
	admin.Release()
	if used, _ := b.Used(); used != 0 {
		t.Fatalf("used %d after release, want 0", used)
	}
	closeA, err := b.OpenStream("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenStream("a"); status(err) != http.StatusTooManyRequests {
		t.Fatalf("a's second stream: %v", err)
	}
	if _, err := b.OpenStream(""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenStream("b"); status(err) != http.StatusTooManyRequests {
		t.Fatalf("a stream past the total: %v", err)
	}
	closeA()
	closeA()
	if _, err := b.OpenStream("a"); err != nil {
		t.Fatalf("a's stream once one closed: %v", err)
	}
}

// Add counts past the bounds (the next Hold is refused), Shrink gives back part of a hold,
// never more than it holds, and UsedBy tells one owner's part.
func TestHold_AddShrink(t *testing.T) {
	b := respbudget.New(respbudget.Limits{BytesPerResponse: 100, BytesPerIdentity: 100, BytesTotal: 1000})
	h, err := b.Hold("a", 60)
	if err != nil {
		t.Fatal(err)
	}
	h.Add(80)
	if used, _ := b.UsedBy("a"); used != 140 || h.Held() != 140 {
		t.Fatalf("a holds %d (hold %d) after Add, want 140", used, h.Held())
	}
	if _, err := b.Hold("a", 1); err == nil || apierror.Status(err) != http.StatusTooManyRequests {
		t.Fatalf("a's next hold past her bound: %v, want 429", err)
	}
	h.Shrink(100)
	if used, _ := b.UsedBy("a"); used != 40 {
		t.Fatalf("a holds %d after Shrink(100), want 40", used)
	}
	h.Shrink(1000)
	if used, _ := b.Used(); used != 0 || h.Held() != 0 {
		t.Fatalf("used %d (hold %d) after shrinking past what is held, want 0", used, h.Held())
	}
	h.Release()
	if used, _ := b.Used(); used != 0 {
		t.Fatalf("used %d after release, want 0", used)
	}
}

// HoldLoad gives an identity at most LoadsPerIdentity load slots at once: her next load
// waits (here: its context ended, so it fails holding nothing) until one is Loaded, while
// another identity loads; the total's slots bound every identity together.
func TestHoldLoad_SlotsPerIdentityAndTotal(t *testing.T) {
	b := respbudget.New(respbudget.Limits{LoadsPerIdentity: 1, LoadsTotal: 3})
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	var a1, a2, bob, c, e respbudget.Hold
	if err := b.HoldLoad(t.Context(), &a1, "a", 10); err != nil {
		t.Fatal(err)
	}
	if err := b.HoldLoad(t.Context(), &bob, "b", 10); err != nil {
		t.Fatalf("b's load while a holds her slot: %v", err)
	}
	if err := b.HoldLoad(ended, &a2, "a", 10); err == nil {
		t.Fatal("a's second load got a slot while her one was taken")
	}
	if used, _ := b.UsedBy("a"); used != 10 {
		t.Fatalf("a holds %d after a load that got no slot, want 10", used)
	}
	a1.Loaded() // counted: her next load may start
	if err := b.HoldLoad(ended, &a2, "a", 10); err != nil {
		t.Fatalf("a's second load once her first was counted: %v", err)
	}
	if used, _ := b.UsedBy("a"); used != 20 {
		t.Fatalf("a holds %d, want 20: Loaded keeps what is held", used)
	}
	if err := b.HoldLoad(ended, &e, "e", 10); err != nil { // the total's third slot
		t.Fatalf("e's load with a total slot left: %v", err)
	}
	if err := b.HoldLoad(ended, &c, "c", 10); err == nil {
		t.Fatal("c's load got a slot past the total's")
	}
	bob.Release()
	if err := b.HoldLoad(ended, &c, "c", 10); err != nil {
		t.Fatalf("c's load once b's was released: %v", err)
	}
}
