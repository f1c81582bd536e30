package memory_test

import (
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/memory"
)

// BenchmarkLiveStore_AppendRead measures one writer's append of a coalesced chunk (a few
// model tokens, 60 bytes) and a follower's read of it from its offset, on one log: what the
// in-memory twin adds per chunk a step streams.
func BenchmarkLiveStore_AppendRead(b *testing.B) {
	ctx := b.Context()
	l := memory.NewLiveStore()
	chunk := []byte(`{"seq":1,"text":"tokens of a model's reply, a few at once"}` + "\n")
	var at, read int64
	key := "run-bench/n/live"
	b.ReportAllocs()
	for i := range b.N {
		if i%50_000 == 0 { // a log takes 50 000 appends: start the next one
			key, at, read = fmt.Sprintf("run-bench/n%d/live", i), 0, 0
		}
		n, err := l.Append(ctx, key, at, chunk)
		if err != nil {
			b.Fatal(err)
		}
		at = n
		data, _, err := l.Read(ctx, key, read, 1<<16)
		if err != nil || len(data) != len(chunk) {
			b.Fatalf("Read = %d bytes, %v", len(data), err)
		}
		read += int64(len(data))
	}
}
