package locktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/lock"
)

// Shared wraps a constructor so that every call within one test returns the same lock. Use
// it for locks whose instances do not share state, such as lock.InProcessThreadLock.
func Shared(newThreadLock func(t *testing.T) lock.ThreadLock) func(t *testing.T) lock.ThreadLock {
	var mu sync.Mutex
	locks := make(map[*testing.T]lock.ThreadLock)
	return func(t *testing.T) lock.ThreadLock {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := locks[t]; ok {
			return l
		}
		l := newThreadLock(t)
		locks[t] = l
		t.Cleanup(func() {
			mu.Lock()
			delete(locks, t)
			mu.Unlock()
		})
		return l
	}
}

// RunThreadLockTests runs the lock.ThreadLock conformance suite. newThreadLock returns a
// lock for one subtest; the suite calls it once or more per subtest, and all locks it returns
// within one subtest must contend for the same keys, the way two processes on one storage
// account do. A process-local lock satisfies that by returning the same instance for the
// same t (see Shared). Cleanup (Close) belongs in t.Cleanup. Keys are unique per subtest, so
// the locks may be backed by shared storage.
func RunThreadLockTests(t *testing.T, newThreadLock func(t *testing.T) lock.ThreadLock) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, newLock func(t *testing.T) lock.ThreadLock)
	}{
		{"AcquireRelease_ReacquireSucceeds", testAcquireRelease},
		{"Tokens_UniqueAndNonEmpty", testTokens},
		{"NonBlocking_HeldReturnsNotAcquired", testNonBlocking},
		{"Blocking_ReleasedDuringWaitAcquires", testBlockingSucceeds},
		{"Blocking_HeldPastTimeoutReturnsNotAcquired", testBlockingTimesOut},
		{"Blocking_ContextCancelledReturnsError", testContextCancelled},
		{"Release_StaleTokenKeepsOwnerLock", testStaleRelease},
		{"Release_UnknownKeyIsNoop", testUnknownRelease},
		{"Keys_IndependentAcrossGraphsAndThreads", testIndependentKeys},
		{"Keys_OddThreadIDsAreDistinct", testOddIDs},
		{"Hammer_MutualExclusion", testHammer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newThreadLock)
		})
	}
}

// graphFor gives each subtest its own graph name, so runs sharing storage never collide.
func graphFor(t *testing.T) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "g-" + hex.EncodeToString(b[:])
}

func mustAcquire(t *testing.T, l lock.ThreadLock, graph, thread string, timeout time.Duration) string {
	t.Helper()
	token, ok, err := l.Acquire(t.Context(), graph, thread, timeout)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", graph, thread, err)
	}
	if !ok {
		t.Fatalf("Acquire(%q, %q): not acquired, want acquired", graph, thread)
	}
	return token
}

func mustNotAcquire(t *testing.T, l lock.ThreadLock, graph, thread string, timeout time.Duration) {
	t.Helper()
	token, ok, err := l.Acquire(t.Context(), graph, thread, timeout)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", graph, thread, err)
	}
	if ok {
		t.Fatalf("Acquire(%q, %q) = %q, acquired; want not acquired", graph, thread, token)
	}
	if token != "" {
		t.Errorf("Acquire(%q, %q) not acquired but token %q; want empty", graph, thread, token)
	}
}

func testAcquireRelease(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	l := newLock(t)
	g := graphFor(t)
	tok := mustAcquire(t, l, g, "t1", 0)
	l.Release(g, "t1", tok)
	tok = mustAcquire(t, l, g, "t1", 0)
	l.Release(g, "t1", tok)
	// Released means free for another holder too.
	other := newLock(t)
	tok = mustAcquire(t, other, g, "t1", 0)
	other.Release(g, "t1", tok)
}

func testTokens(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	l := newLock(t)
	g := graphFor(t)
	seen := make(map[string]bool)
	for i := range 5 {
		tok := mustAcquire(t, l, g, "t1", 0)
		if tok == "" {
			t.Fatalf("acquire %d: empty token", i)
		}
		if seen[tok] {
			t.Fatalf("acquire %d: token %q reused", i, tok)
		}
		seen[tok] = true
		l.Release(g, "t1", tok)
	}
}

func testNonBlocking(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	tok := mustAcquire(t, a, g, "t1", 0)
	defer a.Release(g, "t1", tok)
	for _, l := range []lock.ThreadLock{a, b} {
		start := time.Now()
		mustNotAcquire(t, l, g, "t1", 0)
		// Non-blocking must not wait for the holder; 5 s is far above any storage round trip.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("non-blocking Acquire took %v", d)
		}
	}
}

func testBlockingSucceeds(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	tok := mustAcquire(t, a, g, "t1", 0)
	released := make(chan struct{}) // closed just before the Release: a woken Acquire may return before Release does
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(released)
		a.Release(g, "t1", tok)
	}()
	tok2 := mustAcquire(t, b, g, "t1", 10*time.Second)
	select {
	case <-released:
	default:
		t.Fatal("blocking Acquire succeeded before the holder released")
	}
	if tok2 == tok {
		t.Errorf("new holder got the old token %q", tok)
	}
	b.Release(g, "t1", tok2)
}

func testBlockingTimesOut(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	tok := mustAcquire(t, a, g, "t1", 0)
	defer a.Release(g, "t1", tok)
	const wait = 400 * time.Millisecond
	start := time.Now()
	mustNotAcquire(t, b, g, "t1", wait)
	if d := time.Since(start); d < wait && b != a {
		// A second instance must poll until the deadline before giving up.
		t.Errorf("blocking Acquire gave up after %v, before its %v timeout", d, wait)
	}
}

func testContextCancelled(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	tok := mustAcquire(t, a, g, "t1", 0)
	defer a.Release(g, "t1", tok)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, ok, err := b.Acquire(ctx, g, "t1", 30*time.Second)
		if ok {
			err = errors.New("acquired a held lock")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if b == a {
			// A process-local lock waits on the holder, so it must see the cancellation.
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire after ctx deadline: err = %v, want context.DeadlineExceeded", err)
			}
		} else if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire after ctx deadline: err = %v, want nil or context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire ignored ctx cancellation for 10 s")
	}
}

func testStaleRelease(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	old := mustAcquire(t, a, g, "t1", 0)
	a.Release(g, "t1", old)
	tok := mustAcquire(t, a, g, "t1", 0)
	defer a.Release(g, "t1", tok)
	for _, stale := range []string{old, "", "not-a-token", strings.Repeat("0", 32)} {
		a.Release(g, "t1", stale)
		b.Release(g, "t1", stale)
		mustNotAcquire(t, b, g, "t1", 0)
	}
}

func testUnknownRelease(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	l := newLock(t)
	g := graphFor(t)
	l.Release(g, "never-held", "whatever") // must not panic
	tok := mustAcquire(t, l, g, "never-held", 0)
	l.Release(g, "never-held", tok)
	l.Release(g, "never-held", tok) // double release is a no-op
	tok = mustAcquire(t, l, g, "never-held", 0)
	l.Release(g, "never-held", tok)
}

func testIndependentKeys(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	keys := []struct{ graph, thread string }{
		{g, "t1"}, {g, "t2"}, {g + "-other", "t1"}, {g + "-other", "t2"},
	}
	tokens := make([]string, len(keys))
	for i, k := range keys {
		l := a
		if i%2 == 1 {
			l = b
		}
		tokens[i] = mustAcquire(t, l, k.graph, k.thread, 0)
	}
	for i, k := range keys {
		l := a
		if i%2 == 1 {
			l = b
		}
		l.Release(k.graph, k.thread, tokens[i])
	}
}

// oddThreadIDs are thread ids that must be safe keys: separators, escapes, unicode, length.
var oddThreadIDs = []string{
	"a/b", "a%2Fb", "a?b", "a#b", "a%b", "a b", " ", "..", "../../etc", "ünïcødé-线程-🧵",
	"tab\there", "new\nline", strings.Repeat("x", 256),
}

func testOddIDs(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	a, b := newLock(t), newLock(t)
	g := graphFor(t)
	tokens := make(map[string]string)
	// All held at once: distinct ids must never map to one key.
	for _, id := range oddThreadIDs {
		tokens[id] = mustAcquire(t, a, g, id, 0)
	}
	// A graph/thread split that concatenates the same must not collide either.
	tok := mustAcquire(t, a, g+"/a", "b", 0)
	a.Release(g+"/a", "b", tok)
	for _, id := range oddThreadIDs {
		mustNotAcquire(t, b, g, id, 0)
		a.Release(g, id, tokens[id])
		tok := mustAcquire(t, b, g, id, 0)
		b.Release(g, id, tok)
	}
}

func testHammer(t *testing.T, newLock func(t *testing.T) lock.ThreadLock) {
	locks := []lock.ThreadLock{newLock(t), newLock(t)}
	g := graphFor(t)
	const workers, rounds = 8, 10
	var (
		mu       sync.Mutex
		holders  int
		maxHeld  int
		counter  int
		acquired int
		wg       sync.WaitGroup
	)
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := locks[w%len(locks)]
			for done := 0; done < rounds; {
				tok, ok, err := l.Acquire(t.Context(), g, "hot", 2*time.Second)
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				holders++
				maxHeld = max(maxHeld, holders)
				c := counter
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				counter = c + 1 // a lost update shows up if two holders overlap
				holders--
				acquired++
				mu.Unlock()
				l.Release(g, "hot", tok)
				done++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("hammer Acquire: %v", err)
	}
	if maxHeld != 1 {
		t.Errorf("max concurrent holders = %d, want 1", maxHeld)
	}
	if counter != acquired || acquired != workers*rounds {
		t.Errorf("counter = %d, acquisitions = %d, want both %d", counter, acquired, workers*rounds)
	}
}
