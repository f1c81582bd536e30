//go:build integration

package bloblock

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

func TestIntegrationBlobLease_MarkerBlobs_EscapedAndNotOverwritten(t *testing.T) {
	c, _ := newAzuriteContainer(t)
	l := newAzuriteLock(t, c, Options{BlobPrefix: "p/"})
	ctx := t.Context()

	// An existing marker keeps its metadata: markers are created without overwrite.
	pre := markerName("p/", "g", "pre")
	if _, err := c.NewBlockBlobClient(pre).UploadBuffer(ctx, nil,
		&blockblob.UploadBufferOptions{Metadata: map[string]*string{"owner": to.Ptr("test")}}); err != nil {
		t.Fatal(err)
	}
	ids := []string{"pre", "a/b", "a?b#c", "100%", "ü 1", "../x"}
	for _, id := range ids {
		tok, ok, err := l.Acquire(ctx, "g", id, 0)
		if !ok || err != nil {
			t.Fatalf("Acquire(%q) = %v, %v", id, ok, err)
		}
		defer l.Release("g", id, tok)
	}
	var got []string
	pager := c.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			got = append(got, *b.Name)
		}
	}
	var want []string
	for _, id := range ids {
		want = append(want, markerName("p/", "g", id))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("marker blobs = %q, want %q", got, want)
	}
	props, err := c.NewBlobClient(pre).GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var owner string
	for k, v := range props.Metadata { // metadata keys come back canonicalised ("Owner")
		if strings.EqualFold(k, "owner") && v != nil {
			owner = *v
		}
	}
	if owner != "test" {
		t.Errorf("pre-existing marker metadata = %v, want owner=test (overwritten?)", props.Metadata)
	}
}

func TestIntegrationBlobLease_LostLease_HolderObservesLoss(t *testing.T) {
	const interval = 400 * time.Millisecond
	tests := []struct {
		name     string
		takeover bool          // another holder acquires after the break
		within   time.Duration // loss must be observed by then
	}{
		// Renew with a superseded id is LeaseIdMismatch: definitive, one interval.
		{"break and takeover", true, interval + time.Second},
		// Renew of a broken lease is LeaseIsBrokenAndCannotBeRenewed: three transient failures.
		{"break only", false, 3*interval + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newAzuriteContainer(t)
			l := newAzuriteLock(t, c, Options{LeaseDuration: 15 * time.Second, renewEvery: interval})
			ctx := t.Context()
			tok, ok, err := l.Acquire(ctx, "g", "t", 0)
			if !ok || err != nil {
				t.Fatalf("Acquire = %v, %v", ok, err)
			}
			lost := l.Lost("g", "t", tok)
			if waitClosed(lost, 2*interval) {
				t.Fatal("lease reported lost while renewals succeed")
			}
			op := rawLease(t, c, markerName(DefaultBlobPrefix, "g", "t"))
			if _, err := op.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](0)}); err != nil {
				t.Fatalf("break lease: %v", err)
			}
			if tt.takeover {
				if _, err := op.AcquireLease(ctx, 15, nil); err != nil {
					t.Fatalf("take over lease: %v", err)
				}
			}
			broken := time.Now()
			if !waitClosed(lost, tt.within) {
				t.Fatalf("loss not observed within %v of the break", tt.within)
			}
			t.Logf("loss observed %v after the break", time.Since(broken).Round(time.Millisecond))
			l.Release("g", "t", tok)
			if n := l.size(); n != 0 {
				t.Errorf("tracked keys after release = %d, want 0", n)
			}
			// Local state is clear: the next Acquire asks storage, where the lease is
			// either someone else's (takeover) or broken and free to take.
			tok2, ok, err := l.Acquire(ctx, "g", "t", 0)
			if err != nil || ok == tt.takeover {
				t.Errorf("Acquire after release = %v, %v; want acquired=%v", ok, err, !tt.takeover)
			}
			if ok {
				l.Release("g", "t", tok2)
			}
		})
	}
}

func TestIntegrationOpen_CreatesContainer(t *testing.T) {
	name := azuritetest.UniqueName("open")
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(t.Context(), clients, name, Options{LeaseDuration: 15 * time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer l.Close()
	tok, ok, err := l.Acquire(t.Context(), "g", "t", 0)
	if !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	l.Release("g", "t", tok)
	// Opening again on the existing container is fine.
	l2, err := Open(t.Context(), clients, name, Options{})
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	l2.Close()
}
