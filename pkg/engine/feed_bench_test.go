package engine_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// BenchmarkFeed_WaitingClients measures what a client waiting on a run's feed costs while
// nothing happens: 200 clients, each at the end of its own run that waits for an event, wait
// 3 s. Storage reads are counted by the rig's counting store (the rig's engine, not started,
// reads nothing of its own); memory is the heap and stack the process holds per client while
// they all wait, a goroutine of the caller's included (an HTTP request has one anyway).
//
//	head-reads/client/s: point reads of the head per waiting client per second
//	queries/client/s:    range queries per waiting client per second (0: nothing is read twice)
//	B/client:            memory per waiting client
func BenchmarkFeed_WaitingClients(b *testing.B) {
	const clients, wait = 200, 3 * time.Second
	r := newRig(b, engine.Options{Logger: quiet}, false)
	ids := make([]string, clients)
	after := make([]int64, clients)
	for i := range ids {
		ids[i] = r.start(b, "support_agent", "", `{"user_message":"refund"}`)
	}
	r.drive(b)
	for i, id := range ids {
		page, err := r.e.Feed(context.Background(), id, engine.FeedQuery{})
		if err != nil || page.Items[len(page.Items)-1].Type != engine.HistoryWaitStarted {
			b.Fatalf("run %s is not waiting: %+v %v", id, page, err)
		}
		after[i] = page.NextAfter
	}
	var reads, queries, bytes, elapsed float64
	for b.Loop() {
		var before, during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r.counts.Reset()
		var started, done sync.WaitGroup
		started.Add(clients)
		start := time.Now()
		for i := range clients {
			done.Go(func() {
				started.Done()
				page, err := r.e.Feed(context.Background(), ids[i], engine.FeedQuery{After: after[i], Wait: wait})
				if err != nil || len(page.Items) != 0 {
					b.Errorf("feed: %+v %v", page, err)
				}
			})
		}
		started.Wait()
		for r.counts.Gets.Load() < clients { // every client has read its head once and waits
			time.Sleep(time.Millisecond)
		}
		runtime.GC() // what the waiting clients hold, not the garbage of their first reads
		runtime.ReadMemStats(&during)
		done.Wait()
		elapsed += time.Since(start).Seconds()
		reads += float64(r.counts.Gets.Load())
		queries += float64(r.counts.Queries.Load())
		bytes += float64(during.HeapAlloc+during.StackInuse) - float64(before.HeapAlloc+before.StackInuse)
	}
	per := float64(clients) * elapsed
	b.ReportMetric(reads/per, "head-reads/client/s")
	b.ReportMetric(queries/per, "queries/client/s")
	b.ReportMetric(bytes/float64(clients*b.N), "B/client")
}
