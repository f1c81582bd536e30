package respbudget_test

import (
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
