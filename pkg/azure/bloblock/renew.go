package bloblock

import (
	"context"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
)

// renewLoop renews every held lease each renewEvery until ctx ends. It is the only
// goroutine the lock starts; Close cancels and joins it.
func (l *BlobLeaseThreadLock) renewLoop(ctx context.Context) {
	defer close(l.renewerDone)
	ticker := time.NewTicker(l.renewEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			l.renewAll(ctx)
		}
	}
}

// renewal is one lease to renew in a round.
type renewal struct {
	key leaseKey
	e   *leaseEntry
	err error
}

// renewAll renews every tracked, non-lost lease concurrently (at most renewPool at once),
// each call bounded by renewTimeout (one interval), then records the outcomes.
func (l *BlobLeaseThreadLock) renewAll(ctx context.Context) {
	l.mu.Lock()
	round := make([]renewal, 0, len(l.entries))
	for k, e := range l.entries {
		if !e.lost {
			round = append(round, renewal{key: k, e: e})
		}
	}
	l.mu.Unlock()

	var wg sync.WaitGroup
	sem := make(chan struct{}, renewPool)
	for i := range round {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, l.renewTimeout)
			defer cancel()
			round[i].err = l.api.renew(cctx, round[i].e.blob, round[i].e.leaseID)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return // closing: cancelled calls say nothing about the leases
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range round {
		l.recordRenewal(r)
	}
}

// recordRenewal applies one renewal outcome. Callers hold mu.
func (l *BlobLeaseThreadLock) recordRenewal(r renewal) {
	e := r.e
	if l.entries[r.key] != e || e.lost {
		return // released or replaced while the call was in flight
	}
	switch {
	case r.err == nil:
		e.failures = 0
		return
	case isDefinitiveLoss(r.err):
	default:
		e.failures++
		if e.failures < maxTransientFailures {
			l.log.Debug("thread lock lease renewal failed", "graph", r.key.graph, "thread_id", r.key.thread,
				"failures", e.failures, "error", azsdk.Summary(r.err))
			return
		}
	}
	e.lost = true
	e.end()
	l.log.Warn("thread lock lease lost", "graph", r.key.graph, "thread_id", r.key.thread,
		"failures", e.failures, "error", azsdk.Summary(r.err))
}
