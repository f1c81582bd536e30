//go:build integration

package blobstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// BenchmarkIntegrationLive_AppendToReader measures, on Azurite, a chunk's way from a writer
// to a reader on another store of the same container (as on another instance): one Append of
// a coalesced chunk (60 bytes), then the reader's poll (Length) and Read from its offset —
// three requests: the append, one HEAD, one GET. It reports the round trip's p50 and p99; a
// reader that polls every P adds up to P to what a client waits.
func BenchmarkIntegrationLive_AppendToReader(b *testing.B) {
	c := newContainer(b)
	writer, reader := blobstore.NewLive(c, nil), blobstore.NewLive(c, nil)
	ctx := b.Context()
	chunk := []byte(`{"seq":1,"text":"tokens of a model's reply, a few at once"}` + "\n")
	key := enginetest.UniqueKey("run") + "/1/live"
	var at, read int64
	lat := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%50_000 == 0 {
			key, at, read = enginetest.UniqueKey("run")+"/1/live", 0, 0
		}
		start := time.Now()
		n, err := writer.Append(ctx, key, at, chunk)
		if err != nil {
			b.Fatal(err)
		}
		at = n
		length, err := reader.Length(ctx, key)
		if err != nil || length != at {
			b.Fatalf("Length = %d, %v; want %d", length, err, at)
		}
		data, _, err := reader.Read(ctx, key, read, 1<<16)
		if err != nil || len(data) != len(chunk) {
			b.Fatalf("Read = %d bytes, %v", len(data), err)
		}
		read += int64(len(data))
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
