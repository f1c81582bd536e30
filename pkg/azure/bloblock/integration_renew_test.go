//go:build integration

package bloblock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// Renewal, release and Close on Azurite; failures come from a faultproxy or from another
// holder breaking and taking the lease.

const lostMessage = "thread lock lease lost"

// renewOutcome is what one renewal round meets.
type renewOutcome string

const (
	renewOK       renewOutcome = "ok"       // Azurite renews
	renewTakeover renewOutcome = "takeover" // another holder broke and took the lease: LeaseIdMismatch
	renewBroken   renewOutcome = "broken"   // the lease was broken: LeaseIsBrokenAndCannotBeRenewed
	renewBusy     renewOutcome = "busy"     // every try answered 503 ServerBusy
	renewDrop     renewOutcome = "drop"     // every try's connection closed
	renewTimeout  renewOutcome = "timeout"  // the round's bound has passed
)

func TestIntegrationBlobLease_Renewal_MarksLost(t *testing.T) {
	tests := []struct {
		name     string
		rounds   []renewOutcome
		wantLost []bool // lost after each round
	}{
		{"success keeps", []renewOutcome{renewOK, renewOK}, []bool{false, false}},
		{"mismatch is definitive", []renewOutcome{renewTakeover}, []bool{true}},
		{"three busy", []renewOutcome{renewBusy, renewBusy, renewBusy}, []bool{false, false, true}},
		{"success resets count", []renewOutcome{renewBusy, renewBusy, renewOK, renewBusy, renewBusy}, []bool{false, false, false, false, false}},
		{"dropped connections are transient", []renewOutcome{renewDrop, renewDrop, renewDrop}, []bool{false, false, true}},
		{"timeout is transient", []renewOutcome{renewTimeout, renewTimeout, renewTimeout}, []bool{false, false, true}},
		{"broken ends by three failures", []renewOutcome{renewBroken, renewBroken, renewBroken}, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxiedContainer(t)
			renews, releases := p.count(faultproxy.BlobLease("renew")), p.count(faultproxy.BlobLease("release"))
			log, logs := newLogs(slog.LevelInfo)
			l := newManualLock(t, p.via, Options{Logger: log})
			tok := mustAcquire(t, l, "g", "t")
			blob := markerName(DefaultBlobPrefix, "g", "t")
			ch := l.Lost("g", "t", tok)
			broken := false
			for i, outcome := range tt.rounds {
				var rule *faultproxy.Handle
				switch outcome {
				case renewTakeover:
					takeOver(t, p.direct, blob)
				case renewBroken:
					if !broken {
						op := rawLease(t, p.direct, blob)
						if _, err := op.BreakLease(t.Context(), &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](0)}); err != nil {
							t.Fatal(err)
						}
						broken = true
					}
				case renewBusy:
					rule = p.proxy.Add(faultproxy.Rule{Name: "busy", Match: faultproxy.BlobLease("renew"), Fault: faultproxy.Busy})
				case renewDrop:
					rule = p.proxy.Add(faultproxy.Rule{Name: "drop", Match: faultproxy.BlobLease("renew"), Fault: faultproxy.Drop})
				case renewTimeout:
					l.renewTimeout = time.Nanosecond // no renewer runs: only renewAll reads it
				}
				before := renews.Load()
				l.renewAll(t.Context())
				l.renewTimeout = time.Minute
				if rule != nil {
					rule.Remove()
					if rule.Fired() == 0 {
						t.Fatalf("round %d: the %s rule never fired", i, outcome)
					}
				}
				if outcome != renewTimeout && renews.Load() == before {
					t.Fatalf("round %d (%s): no renewal reached the proxy", i, outcome)
				}
				if got := isClosed(ch); got != tt.wantLost[i] {
					t.Fatalf("round %d (%s): lost = %v, want %v", i, outcome, got, tt.wantLost[i])
				}
			}
			final := tt.wantLost[len(tt.wantLost)-1]
			if got := strings.Contains(logs.String(), lostMessage); got != final {
				t.Errorf("%q logged = %v, want %v; log:\n%s", lostMessage, got, final, logs)
			}
			l.Release("g", "t", tok)
			if got, want := releases.Load(), map[bool]int64{false: 1, true: 0}[final]; got != want {
				t.Errorf("storage releases = %d for lost=%v, want %d", got, final, want)
			}
			if n := l.size(); n != 0 {
				t.Errorf("tracked keys after release = %d, want 0", n)
			}
		})
	}
}

func TestIntegrationBlobLease_Renewal_IgnoresReleasedEntries(t *testing.T) {
	p := newProxiedContainer(t)
	log, logs := newLogs(slog.LevelInfo)
	l := newManualLock(t, p.via, Options{Logger: log})
	tok := mustAcquire(t, l, "g", "t")
	blob := markerName(DefaultBlobPrefix, "g", "t")
	released := make(chan struct{})
	var (
		other   *lease.BlobClient
		hookErr error
		hooked  atomic.Bool
		once    sync.Once
	)
	// When the renewal reaches the proxy, the holder releases (forgetting the key before its
	// own storage call, which the proxy holds back until this hook returns) and another holder
	// takes the lease, so the renewal in flight fails with LeaseIdMismatch.
	p.proxy.Add(faultproxy.Rule{Name: "release meanwhile", Match: func(r *faultproxy.Request) bool {
		if faultproxy.BlobLease("renew")(r) {
			once.Do(func() {
				go func() { l.Release("g", "t", tok); close(released) }()
				for l.size() != 0 {
					time.Sleep(time.Millisecond)
				}
				other, hookErr = breakAndTake(p.direct, blob)
				hooked.Store(true)
			})
		}
		return false
	}})
	l.renewAll(t.Context())
	<-released
	if !hooked.Load() || hookErr != nil {
		t.Fatalf("the renewal never reached the proxy, or the takeover failed: %v", hookErr)
	}
	if strings.Contains(logs.String(), lostMessage) {
		t.Errorf("a renewal outcome for a released entry was recorded as a loss; log:\n%s", logs)
	}

	if _, err := other.ReleaseLease(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	tok2 := mustAcquire(t, l, "g", "t")
	l.renewAll(t.Context())
	if isClosed(l.Lost("g", "t", tok2)) {
		t.Error("the new holder is marked lost")
	}
}

func TestIntegrationBlobLease_Close_ReleasesAndRefuses(t *testing.T) {
	p := newProxiedContainer(t)
	releases := p.count(faultproxy.BlobLease("release"))
	// Renewals every 50 ms find the takeover soon; each may take 5 s, so that a loaded
	// Azurite's slow answers do not mark a held lease lost.
	l := newAzuriteLock(t, p.via, Options{LeaseDuration: 15 * time.Second, renewEvery: 50 * time.Millisecond, renewTimeout: 5 * time.Second})
	threads := []string{"a", "b", "c"}
	var toks []string
	for _, th := range threads {
		tok := mustAcquire(t, l, "g", th)
		toks = append(toks, tok)
	}
	// The renewer finds c taken over and marks it lost.
	takeOver(t, p.direct, markerName(DefaultBlobPrefix, "g", "c"))
	if !waitClosed(l.Lost("g", "c", toks[2]), 5*time.Second) {
		t.Fatal("the renewer did not mark the taken-over lease lost")
	}
	for range 2 {
		if err := l.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	if got := releases.Load(); got != 2 {
		t.Errorf("leases released on Close = %d, want 2 (the lost one is skipped)", got)
	}
	select {
	case <-l.renewerDone:
	default:
		t.Error("renewer still running after Close")
	}
	for i, th := range threads {
		want := lease.StateTypeAvailable
		if th == "c" {
			want = lease.StateTypeLeased // by the other holder
		}
		if s := leaseState(t, p.direct, markerName(DefaultBlobPrefix, "g", th)); s != want {
			t.Errorf("lease state of %s after Close = %q, want %q", th, s, want)
		}
		if !isClosed(l.Lost("g", th, toks[i])) {
			t.Errorf("Lost(%s) not closed after Close", th)
		}
		l.Release("g", th, toks[i]) // safe no-op
	}
	if got := releases.Load(); got != 2 {
		t.Errorf("storage releases after Close and Release = %d, want still 2", got)
	}
	_, ok, err := l.Acquire(t.Context(), "g", "d", 0)
	if ok || !errors.Is(err, lock.ErrClosed) || err.Error() != "thread lock is closed" {
		t.Errorf("Acquire after Close = %v, %v; want ErrClosed", ok, err)
	}
	// The released leases are free for another instance.
	other := newManualLock(t, p.direct, Options{})
	for _, th := range threads[:2] {
		if _, ok, err := other.Acquire(t.Context(), "g", th, 0); !ok || err != nil {
			t.Errorf("other Acquire(%s) after Close = %v, %v; want acquired", th, ok, err)
		}
	}
}

func TestIntegrationBlobLease_ReleaseFailure_LoggedAtDebug(t *testing.T) {
	c, _ := newAzuriteContainer(t)
	log, logs := newLogs(slog.LevelDebug)
	l := newManualLock(t, c, Options{Logger: log})
	tok := mustAcquire(t, l, "g", "t")
	takeOver(t, c, markerName(DefaultBlobPrefix, "g", "t")) // someone else holds it now
	l.Release("g", "t", tok)
	out := logs.String()
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "lease release failed") || !strings.Contains(out, "LeaseIdMismatch") {
		t.Errorf("release failure not logged at debug; log:\n%s", out)
	}
	if strings.Contains(out, tok) {
		t.Error("log leaks the owner token")
	}
	if n := l.size(); n != 0 {
		t.Errorf("tracked keys after a failed release = %d, want 0", n)
	}
}

func TestIntegrationContextWithLoss_LeaseLost_CancelsWithCause(t *testing.T) {
	c, _ := newAzuriteContainer(t)
	l := newManualLock(t, c, Options{})
	tok := mustAcquire(t, l, "g", "t")
	ctx, cancel := lock.ContextWithLoss(t.Context(), l, "g", "t", tok)
	defer cancel()
	l.renewAll(t.Context())
	if ctx.Err() != nil {
		t.Fatal("context cancelled while the lease is held")
	}
	takeOver(t, c, markerName(DefaultBlobPrefix, "g", "t"))
	l.renewAll(t.Context())
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled after the lease was lost")
	}
	if !errors.Is(context.Cause(ctx), lock.ErrLockLost) {
		t.Errorf("cause = %v, want ErrLockLost", context.Cause(ctx))
	}
}
