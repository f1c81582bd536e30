package tablethreads

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSortable_KeepsOrder: encoded ids followed by the separator sort as the ids do, prefixes
// included.
func TestSortable_KeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ids := []string{"", "a", "ab", "abc", "a/b", "a.b", "a b", "~", "\x7e\x7e", strings.Repeat("x", 256)}
	for range 2000 {
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f))
		}
		ids = append(ids, string(b))
	}
	for i, a := range ids {
		for _, b := range append(ids[:10:10], ids[(i*7+3)%len(ids)], ids[(i*13+5)%len(ids)]) {
			ea, eb := sortable(a)+"!", sortable(b)+"!"
			if (a < b) != (ea < eb) || (a == b) != (ea == eb) {
				t.Fatalf("%q vs %q: encoded %q vs %q", a, b, ea, eb)
			}
		}
	}
	if n := len(indexRowKey(time.Now(), strings.Repeat("x", 256), newNonce())); n > 512 {
		t.Fatalf("row key of %d characters", n)
	}
}
