//go:build integration

package bloblock

import (
	"context"
	"testing"
)

// BenchmarkIntegrationBlobLease measures Acquire+Release pairs of the lock on Azurite;
// compare with BenchmarkIntegrationRawLease from the same run.
func BenchmarkIntegrationBlobLease(b *testing.B) {
	c, _ := newAzuriteContainer(b)
	l := newAzuriteLock(b, c, Options{})
	ctx := context.Background()
	tok, ok, err := l.Acquire(ctx, "bench", "t", 0) // creates the marker
	if err != nil || !ok {
		b.Fatalf("Acquire = %v, %v", ok, err)
	}
	l.Release("bench", "t", tok)
	b.ReportAllocs()
	for b.Loop() {
		tok, ok, err := l.Acquire(ctx, "bench", "t", 0)
		if err != nil || !ok {
			b.Fatalf("Acquire = %v, %v", ok, err)
		}
		l.Release("bench", "t", tok)
	}
}

// BenchmarkIntegrationRawLease measures the SDK's own lease acquire+release on a marker
// blob: the floor the lock is measured against.
func BenchmarkIntegrationRawLease(b *testing.B) {
	c, _ := newAzuriteContainer(b)
	ctx := context.Background()
	name := markerName(DefaultBlobPrefix, "bench", "t")
	if err := (azureLeases{c: c}).createMarker(ctx, name); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		lc := rawLease(b, c, name)
		if _, err := lc.AcquireLease(ctx, 60, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := lc.ReleaseLease(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
