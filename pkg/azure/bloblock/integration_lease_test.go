//go:build integration

package bloblock

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// Acquire on Azurite: what reaches storage (counted at a faultproxy) and what comes back.

var tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// markerUpload matches the upload that creates a marker blob (a PUT of a blob without comp).
func markerUpload() faultproxy.Matcher {
	return faultproxy.All(faultproxy.BlobPut(), func(r *faultproxy.Request) bool { return r.Query.Get("comp") == "" })
}

func TestIntegrationBlobLease_Acquire_CreatesMarkerOnce(t *testing.T) {
	p := newProxiedContainer(t)
	uploads := p.count(markerUpload())
	l := newManualLock(t, p.via, Options{BlobPrefix: "locks/"})
	const blob = "locks/g/a%2Fb"
	for i := range 3 {
		tok, ok, err := l.Acquire(t.Context(), "g", "a/b", 0)
		if err != nil || !ok {
			t.Fatalf("Acquire %d = %v, %v", i, ok, err)
		}
		if !tokenPattern.MatchString(tok) {
			t.Errorf("token %q is not 32 hex characters", tok)
		}
		if s := leaseState(t, p.direct, blob); s != lease.StateTypeLeased {
			t.Fatalf("marker %s lease state = %q, want leased", blob, s)
		}
		l.Release("g", "a/b", tok)
		if s := leaseState(t, p.direct, blob); s != lease.StateTypeAvailable {
			t.Fatalf("marker %s lease state after release = %q, want available", blob, s)
		}
	}
	if got := uploads.Load(); got != 1 {
		t.Errorf("marker uploads = %d, want 1", got)
	}
}

func TestIntegrationBlobLease_TrackedKey_NoStorageCall(t *testing.T) {
	for _, lost := range []bool{false, true} {
		p := newProxiedContainer(t)
		acquires, releases := p.count(faultproxy.BlobLease("acquire")), p.count(faultproxy.BlobLease("release"))
		l := newManualLock(t, p.via, Options{})
		tok := mustAcquire(t, l, "g", "t")
		if lost {
			takeOver(t, p.direct, markerName(DefaultBlobPrefix, "g", "t"))
			l.renewAll(t.Context())
			if !isClosed(l.Lost("g", "t", tok)) {
				t.Fatal("renewal after a takeover did not mark the lease lost")
			}
		}
		before := acquires.Load()
		start := time.Now()
		_, ok, err := l.Acquire(t.Context(), "g", "t", 5*time.Second)
		if ok || err != nil {
			t.Errorf("lost=%v: Acquire on tracked key = %v, %v; want not acquired", lost, ok, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("lost=%v: Acquire on tracked key waited %v, want at once", lost, d)
		}
		if got := acquires.Load() - before; got != 0 {
			t.Errorf("lost=%v: storage acquires = %d, want 0", lost, got)
		}
		l.Release("g", "t", tok)
		if n := l.size(); n != 0 {
			t.Errorf("lost=%v: tracked keys after release = %d, want 0", lost, n)
		}
		// A lost lease is only forgotten; a held one is given back.
		if got, want := releases.Load(), map[bool]int64{false: 1, true: 0}[lost]; got != want {
			t.Errorf("lost=%v: storage releases = %d, want %d", lost, got, want)
		}
	}
}

func TestIntegrationBlobLease_LostLocalRace_GivesNewLeaseBack(t *testing.T) {
	c, _ := newAzuriteContainer(t)
	l := newManualLock(t, c, Options{})
	tok := mustAcquire(t, l, "g", "t")
	defer l.Release("g", "t", tok)
	if err := l.api.createMarker(t.Context(), "other"); err != nil {
		t.Fatal(err)
	}
	id, err := l.api.acquire(t.Context(), "other", 15)
	if err != nil {
		t.Fatal(err)
	}
	// A second local Acquire got a lease while the key was won locally.
	tok2, ok, err := l.track(leaseKey{"g", "t"}, "other", id)
	if ok || err != nil || tok2 != "" {
		t.Errorf("track on a won key = %q, %v, %v; want not acquired", tok2, ok, err)
	}
	if s := leaseState(t, c, "other"); s != lease.StateTypeAvailable {
		t.Errorf("lease state of the losing lease = %q, want available (released)", s)
	}
}

func TestIntegrationBlobLease_StorageError_Returned(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, p proxied) *container.Client // the lock's container
		status int                                             // the answer's status; 0: no answer
		code   string
	}{
		{"server busy", func(t *testing.T, p proxied) *container.Client {
			p.proxy.Add(faultproxy.Rule{Name: "busy", Match: faultproxy.BlobLease("acquire"), Fault: faultproxy.Busy})
			return p.via
		}, http.StatusServiceUnavailable, "ServerBusy"},
		{"connection dropped", func(t *testing.T, p proxied) *container.Client {
			p.proxy.Add(faultproxy.Rule{Name: "drop", Match: faultproxy.BlobLease("acquire"), Fault: faultproxy.Drop})
			return p.via
		}, 0, ""},
		{"container missing", func(t *testing.T, p proxied) *container.Client {
			if _, err := p.direct.Delete(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			return p.via
		}, http.StatusNotFound, "ContainerNotFound"},
		{"auth", func(t *testing.T, p proxied) *container.Client {
			cs := azuritetest.ConnectionString(t)
			i := strings.Index(cs, "AccountKey=") + len("AccountKey=")
			j := i + strings.Index(cs[i:], ";")
			wrong := cs[:i] + "d3Jvbmcta2V5LXdyb25nLWtleQ==" + cs[j:]
			c, err := container.NewClientFromConnectionString(wrong, "any", nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}, http.StatusForbidden, "AuthorizationFailure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxiedContainer(t)
			l := newManualLock(t, tt.setup(t, p), Options{})
			_, ok, err := l.Acquire(t.Context(), "g", "t", time.Second)
			if ok || err == nil {
				t.Fatalf("Acquire = %v, %v; want an error", ok, err)
			}
			var re *azcore.ResponseError
			switch {
			case tt.status == 0 && errors.As(err, &re):
				t.Errorf("Acquire error = %v; want a transport error", err)
			case tt.status != 0 && (!errors.As(err, &re) || re.StatusCode != tt.status || re.ErrorCode != tt.code):
				t.Errorf("Acquire error = %v; want %d %s", err, tt.status, tt.code)
			}
			if n := l.size(); n != 0 {
				t.Errorf("tracked keys after failure = %d, want 0", n)
			}
		})
	}
}

func TestIntegrationBlobLease_ConflictCodes_AreNotAcquired(t *testing.T) {
	for _, breaking := range []bool{false, true} {
		c, _ := newAzuriteContainer(t)
		other, l := newManualLock(t, c, Options{}), newManualLock(t, c, Options{})
		tok := mustAcquire(t, other, "g", "t")
		defer other.Release("g", "t", tok)
		if breaking {
			// Breaking, not yet broken: Azure answers LeaseIsBreakingAndCannotBeAcquired,
			// Azurite LeaseAlreadyPresent; both are 409.
			op := rawLease(t, c, markerName(DefaultBlobPrefix, "g", "t"))
			if _, err := op.BreakLease(t.Context(), &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](15)}); err != nil {
				t.Fatal(err)
			}
		}
		_, ok, err := l.Acquire(t.Context(), "g", "t", 0)
		if ok || err != nil {
			t.Errorf("breaking=%v: Acquire of a held lease = %v, %v; want not acquired, nil", breaking, ok, err)
		}
	}
}

func TestIntegrationBlobLease_Blocking_BacksOffAndCancels(t *testing.T) {
	p := newProxiedContainer(t)
	acquires := p.count(faultproxy.BlobLease("acquire"))
	other, l := newManualLock(t, p.direct, Options{}), newManualLock(t, p.via, Options{})
	tok := mustAcquire(t, other, "g", "t")
	defer other.Release("g", "t", tok)

	_, ok, err := l.Acquire(t.Context(), "g", "t", 600*time.Millisecond)
	if ok || err != nil {
		t.Fatalf("Acquire = %v, %v; want not acquired", ok, err)
	}
	// Back-off min(0.5, max(0.05, remaining/2)) s over 0.6 s: a handful of tries, not a spin.
	if n := acquires.Load(); n < 2 || n > 8 {
		t.Errorf("storage acquires in 600 ms = %d, want 2..8", n)
	}

	// The context ends inside the first 500 ms back-off, which it cuts short.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, ok, err = l.Acquire(ctx, "g", "t", time.Minute)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with expiring ctx = %v, %v; want context.DeadlineExceeded", ok, err)
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("Acquire returned %v after it began, want soon after its context's 100 ms", d)
	}
}

func TestIntegrationNew_CreateContainer_OnlyWhenAsked(t *testing.T) {
	for _, create := range []bool{false, true} {
		name := azuritetest.UniqueName("create")
		c, err := container.NewClientFromConnectionString(azuritetest.ConnectionString(t), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
		newAzuriteLock(t, c, Options{CreateContainer: create})
		_, err = c.GetProperties(t.Context(), nil)
		if exists := err == nil; exists != create {
			t.Errorf("CreateContainer=%v: container exists = %v (%v)", create, exists, err)
		}
	}
}
