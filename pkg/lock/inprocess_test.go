package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestInProcessThreadLock_Token_Is32Hex(t *testing.T) {
	var l InProcessThreadLock // zero value is usable
	tok, ok, err := l.Acquire(t.Context(), "g", "t", 0)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v; want acquired", ok, err)
	}
	if !tokenPattern.MatchString(tok) {
		t.Errorf("token %q does not match %s", tok, tokenPattern)
	}
}

func TestInProcessThreadLock_ReleaseAll_MapEmpty(t *testing.T) {
	tests := []struct {
		name   string
		keys   int
		stale  bool
		waiter bool
	}{
		{"distinct keys", 1000, false, false},
		{"stale releases in between", 200, true, false},
		{"timed-out waiters", 50, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewInProcessThreadLock()
			for i := range tt.keys {
				thread := fmt.Sprintf("t%d", i)
				tok, ok, err := l.Acquire(t.Context(), "g", thread, 0)
				if err != nil || !ok {
					t.Fatalf("Acquire %d = %v, %v", i, ok, err)
				}
				if tt.stale {
					l.Release("g", thread, "stale")
				}
				if tt.waiter {
					if _, ok, _ := l.Acquire(t.Context(), "g", thread, time.Millisecond); ok {
						t.Fatalf("waiter %d acquired a held lock", i)
					}
				}
				l.Release("g", thread, tok)
			}
			if n := l.size(); n != 0 {
				t.Errorf("after %d acquire/release pairs the map holds %d entries, want 0", tt.keys, n)
			}
		})
	}
}

func TestInProcessThreadLock_StaleRelease_LoggedAtDebug(t *testing.T) {
	var buf bytes.Buffer
	l := &InProcessThreadLock{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	l.Release("g", "t", "stale")
	l.Release("g", "unknown", tok)
	out := buf.String()
	if got := strings.Count(out, "level=DEBUG"); got != 2 {
		t.Errorf("debug records = %d, want 2; log:\n%s", got, out)
	}
	if strings.Contains(out, tok) {
		t.Errorf("log leaks the owner token:\n%s", out)
	}
}

func TestInProcessThreadLock_Waiters_AllEventuallyAcquire(t *testing.T) {
	l := NewInProcessThreadLock()
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	const waiters = 10
	var wg sync.WaitGroup
	results := make(chan string, waiters)
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, ok, err := l.Acquire(t.Context(), "g", "t", 5*time.Second)
			if err != nil || !ok {
				results <- ""
				return
			}
			results <- tok
			time.Sleep(time.Millisecond)
			l.Release("g", "t", tok)
		}()
	}
	time.Sleep(20 * time.Millisecond)
	l.Release("g", "t", tok)
	wg.Wait()
	close(results)
	n := 0
	for r := range results {
		if r == "" {
			t.Error("a waiter did not acquire within 5 s")
		}
		n++
	}
	if n != waiters {
		t.Errorf("results = %d, want %d", n, waiters)
	}
	if s := l.size(); s != 0 {
		t.Errorf("map size after all releases = %d, want 0", s)
	}
}

func TestInProcessThreadLock_CancelledContext_ReturnsError(t *testing.T) {
	l := NewInProcessThreadLock()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, ok, err := l.Acquire(ctx, "g", "t", 0)
	if ok || !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire on cancelled ctx = %v, %v; want not acquired, context.Canceled", ok, err)
	}
}

func BenchmarkInProcess(b *testing.B) {
	l := NewInProcessThreadLock()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tok, ok, err := l.Acquire(ctx, "g", "t", 0)
		if err != nil || !ok {
			b.Fatalf("Acquire = %v, %v", ok, err)
		}
		l.Release("g", "t", tok)
	}
}
