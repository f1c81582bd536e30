package bloblock

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/lock"
)

var tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestBlobLeaseThreadLock_Acquire_CreatesMarkerOnce(t *testing.T) {
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{BlobPrefix: "locks/"})
	for i := range 3 {
		tok, ok, err := l.Acquire(t.Context(), "g", "a/b", 0)
		if err != nil || !ok {
			t.Fatalf("Acquire %d = %v, %v", i, ok, err)
		}
		if !tokenPattern.MatchString(tok) {
			t.Errorf("token %q is not 32 hex characters", tok)
		}
		if f.heldBy("locks/g/a%2Fb") == "" {
			t.Fatalf("marker locks/g/a%%2Fb is not leased; blobs: %v", f.blobs)
		}
		l.Release("g", "a/b", tok)
	}
	if got := f.count("createMarker"); got != 1 {
		t.Errorf("marker creations = %d, want 1", got)
	}
}

func TestBlobLeaseThreadLock_TrackedKey_NoStorageCall(t *testing.T) {
	for _, lost := range []bool{false, true} {
		f := newFakeLeases()
		l := newFakeLock(t, f, Options{})
		tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
		if lost {
			f.renewFn = func(string) error { return respErr(http.StatusConflict, "LeaseLost") }
			l.renewAll(t.Context())
		}
		before := f.count("acquire")
		start := time.Now()
		_, ok, err := l.Acquire(t.Context(), "g", "t", 5*time.Second)
		if ok || err != nil {
			t.Errorf("lost=%v: Acquire on tracked key = %v, %v; want not acquired", lost, ok, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("lost=%v: Acquire on tracked key waited %v, want at once", lost, d)
		}
		if got := f.count("acquire") - before; got != 0 {
			t.Errorf("lost=%v: storage acquires = %d, want 0", lost, got)
		}
		l.Release("g", "t", tok)
		if n := l.size(); n != 0 {
			t.Errorf("lost=%v: tracked keys after release = %d, want 0", lost, n)
		}
	}
}

func TestBlobLeaseThreadLock_LostLocalRace_GivesNewLeaseBack(t *testing.T) {
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{})
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	defer l.Release("g", "t", tok)
	f.createMarker(t.Context(), "other")
	id, err := f.acquire(t.Context(), "other", 60)
	if err != nil {
		t.Fatal(err)
	}
	// A second local acquire got a lease while the key was won locally.
	tok2, ok, err := l.track(leaseKey{"g", "t"}, "other", id)
	if ok || err != nil || tok2 != "" {
		t.Errorf("track on a won key = %q, %v, %v; want not acquired", tok2, ok, err)
	}
	if f.heldBy("other") != "" {
		t.Error("the losing lease was not released")
	}
}

func TestBlobLeaseThreadLock_StorageError_Returned(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"server error", respErr(http.StatusInternalServerError, "InternalError")},
		{"container missing", respErr(http.StatusNotFound, "ContainerNotFound")},
		{"auth", respErr(http.StatusForbidden, "AuthorizationFailure")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLeases()
			f.acqFn = func(string) error { return tt.err }
			l := newFakeLock(t, f, Options{})
			_, ok, err := l.Acquire(t.Context(), "g", "t", time.Second)
			if ok || !errors.Is(err, tt.err) {
				t.Errorf("Acquire = %v, %v; want error wrapping %v", ok, err, tt.err)
			}
			if n := l.size(); n != 0 {
				t.Errorf("tracked keys after failure = %d, want 0", n)
			}
		})
	}
}

func TestBlobLeaseThreadLock_ConflictCodes_AreNotAcquired(t *testing.T) {
	for _, e := range []error{
		respErr(http.StatusConflict, "LeaseAlreadyPresent"),
		respErr(http.StatusConflict, "SomethingElse"),
		respErr(http.StatusPreconditionFailed, "leaseIsBreakingAndCannotBeAcquired"),
	} {
		f := newFakeLeases()
		f.acqFn = func(string) error { return e }
		l := newFakeLock(t, f, Options{})
		_, ok, err := l.Acquire(t.Context(), "g", "t", 0)
		if ok || err != nil {
			t.Errorf("Acquire with %v = %v, %v; want not acquired, nil", e, ok, err)
		}
	}
}

func TestBlobLeaseThreadLock_Blocking_BacksOffAndCancels(t *testing.T) {
	f := newFakeLeases()
	other := newFakeLock(t, f, Options{})
	l := newFakeLock(t, f, Options{})
	tok, _, _ := other.Acquire(t.Context(), "g", "t", 0)
	defer other.Release("g", "t", tok)

	before := f.count("acquire")
	_, ok, err := l.Acquire(t.Context(), "g", "t", 600*time.Millisecond)
	if ok || err != nil {
		t.Fatalf("Acquire = %v, %v; want not acquired", ok, err)
	}
	// Back-off min(0.5, max(0.05, remaining/2)) s over 0.6 s: a handful of tries, not a spin.
	if n := f.count("acquire") - before; n < 2 || n > 8 {
		t.Errorf("storage acquires in 600 ms = %d, want 2..8", n)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, ok, err = l.Acquire(ctx, "g", "t", time.Minute)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with expiring ctx = %v, %v; want context.DeadlineExceeded", ok, err)
	}
}

func TestBlobLeaseThreadLock_Renewal_MarksLost(t *testing.T) {
	lost := respErr(http.StatusConflict, "LeaseIdMismatchWithLeaseOperation")
	transient := respErr(http.StatusInternalServerError, "ServerBusy")
	broken := respErr(http.StatusConflict, "LeaseIsBrokenAndCannotBeRenewed")
	tests := []struct {
		name     string
		rounds   []error // renewal outcome per round
		wantLost []bool  // lost after each round
	}{
		{"success keeps", []error{nil, nil}, []bool{false, false}},
		{"mismatch is definitive", []error{lost}, []bool{true}},
		{"lease lost code", []error{respErr(http.StatusConflict, "leaselost")}, []bool{true}},
		{"not present", []error{respErr(http.StatusConflict, "LeaseNotPresentWithLeaseOperation")}, []bool{true}},
		{"id missing", []error{respErr(http.StatusPreconditionFailed, "LeaseIdMissing")}, []bool{true}},
		{"any 412", []error{respErr(http.StatusPreconditionFailed, "ConditionNotMet")}, []bool{true}},
		{"three transient", []error{transient, transient, transient}, []bool{false, false, true}},
		{"success resets count", []error{transient, transient, nil, transient, transient}, []bool{false, false, false, false, false}},
		{"timeout is transient", []error{context.DeadlineExceeded, context.DeadlineExceeded, context.DeadlineExceeded}, []bool{false, false, true}},
		{"broken ends by three failures", []error{broken, broken, broken}, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			f := newFakeLeases()
			l := newFakeLock(t, f, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
			ch := l.Lost("g", "t", tok)
			for i, outcome := range tt.rounds {
				f.renewFn = func(string) error { return outcome }
				l.renewAll(t.Context())
				gotLost := isClosed(ch)
				if gotLost != tt.wantLost[i] {
					t.Fatalf("round %d (%v): lost = %v, want %v", i, outcome, gotLost, tt.wantLost[i])
				}
			}
			final := tt.wantLost[len(tt.wantLost)-1]
			if got := strings.Contains(logs.String(), "level=WARN"); got != final {
				t.Errorf("WARN logged = %v, want %v", got, final)
			}
			releasesBefore := f.count("release")
			l.Release("g", "t", tok)
			if got := f.count("release") - releasesBefore; final && got != 0 || !final && got != 1 {
				t.Errorf("storage releases = %d for lost=%v", got, final)
			}
			if n := l.size(); n != 0 {
				t.Errorf("tracked keys after release = %d, want 0", n)
			}
		})
	}
}

func TestBlobLeaseThreadLock_Renewal_IgnoresReleasedEntries(t *testing.T) {
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{})
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	var once sync.Once
	f.renewFn = func(string) error {
		// Release while the renewal is in flight; it forgets the key before its own
		// storage call, which waits for this one.
		once.Do(func() { go l.Release("g", "t", tok) })
		for l.size() != 0 {
			time.Sleep(time.Millisecond)
		}
		return respErr(http.StatusConflict, "LeaseLost")
	}
	l.renewAll(t.Context())
	tok2, ok, err := l.Acquire(t.Context(), "g", "t", time.Second)
	if !ok || err != nil {
		t.Fatalf("Acquire after release = %v, %v", ok, err)
	}
	f.renewFn = nil
	l.renewAll(t.Context())
	if isClosed(l.Lost("g", "t", tok2)) {
		t.Error("a stale renewal outcome marked the new holder lost")
	}
}

func TestBlobLeaseThreadLock_Close_ReleasesAndRefuses(t *testing.T) {
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{renewEvery: time.Millisecond})
	var toks []string
	for _, th := range []string{"a", "b", "c"} {
		tok, ok, err := l.Acquire(t.Context(), "g", th, 0)
		if !ok || err != nil {
			t.Fatal(ok, err)
		}
		toks = append(toks, tok)
	}
	f.renewFn = func(name string) error {
		if strings.HasSuffix(name, "/c") {
			return respErr(http.StatusConflict, "LeaseLost")
		}
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for !isClosed(l.Lost("g", "c", toks[2])) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	releases := f.count("release")
	for range 2 {
		if err := l.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	if got := f.count("release") - releases; got != 2 {
		t.Errorf("leases released on Close = %d, want 2 (the lost one is skipped)", got)
	}
	select {
	case <-l.renewerDone:
	default:
		t.Error("renewer still running after Close")
	}
	for i, th := range []string{"a", "b", "c"} {
		if !isClosed(l.Lost("g", th, toks[i])) {
			t.Errorf("Lost(%s) not closed after Close", th)
		}
		l.Release("g", th, toks[i]) // safe no-op
	}
	_, ok, err := l.Acquire(t.Context(), "g", "d", 0)
	if ok || !errors.Is(err, lock.ErrClosed) || err.Error() != "thread lock is closed" {
		t.Errorf("Acquire after Close = %v, %v; want ErrClosed", ok, err)
	}
}

func TestBlobLeaseThreadLock_ReleaseFailure_LoggedAtDebug(t *testing.T) {
	var logs bytes.Buffer
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	f.breakLease("thread-locks/g/t")
	f.acquire(t.Context(), "thread-locks/g/t", 60) // someone else takes it
	l.Release("g", "t", tok)
	if !strings.Contains(logs.String(), "level=DEBUG") || !strings.Contains(logs.String(), "LeaseIdMismatch") {
		t.Errorf("release failure not logged at debug; log:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), tok) {
		t.Error("log leaks the owner token")
	}
}

func TestContextWithLoss_LockLost_CancelsWithCause(t *testing.T) {
	f := newFakeLeases()
	l := newFakeLock(t, f, Options{})
	tok, _, _ := l.Acquire(t.Context(), "g", "t", 0)
	ctx, cancel := lock.ContextWithLoss(t.Context(), l, "g", "t", tok)
	defer cancel()
	if ctx.Err() != nil {
		t.Fatal("context cancelled while the lease is held")
	}
	f.renewFn = func(string) error { return respErr(http.StatusConflict, "LeaseLost") }
	l.renewAll(t.Context())
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled after the lease was lost")
	}
	if !errors.Is(context.Cause(ctx), lock.ErrLockLost) {
		t.Errorf("cause = %v, want ErrLockLost", context.Cause(ctx))
	}

	in := lock.NewInProcessThreadLock()
	tok, _, _ = in.Acquire(t.Context(), "g", "t", 0)
	ctx, cancel = lock.ContextWithLoss(t.Context(), in, "g", "t", tok)
	if ctx.Err() != nil {
		t.Error("in-process context cancelled early")
	}
	cancel()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after cancel = %v, want context.Canceled", context.Cause(ctx))
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
