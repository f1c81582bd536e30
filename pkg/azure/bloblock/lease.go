package bloblock

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

const (
	// releaseTimeout bounds one best-effort lease release.
	releaseTimeout = 5 * time.Second
	// closeWait bounds how long Close waits for the renewer to stop.
	closeWait = 5 * time.Second
	// renewPool bounds concurrent renewals (and releases on Close).
	renewPool = 16
	// maxTransientFailures in a row mark a lease lost.
	maxTransientFailures = 3
)

// BlobLeaseThreadLock is a distributed lock.ThreadLock: a lease on one marker blob per
// (graphName, threadID), so instances of a scaled-out app serialise a thread's requests.
//
// A lease says who may run; it does not fence writes. A holder learns that its lease was
// lost through Lost (see lock.LossNotifier and lock.ContextWithLoss). Close releases every held lease
// and stops the renewer.
type BlobLeaseThreadLock struct {
	api        azureLeases
	seconds    int32         // lease duration sent to the service; -1 infinite
	prefix     string        // marker blob prefix
	renewEvery time.Duration // 0: no renewal
	// renewTimeout bounds one renewal call: renewEvery, so that maxTransientFailures slow
	// calls take about one lease duration.
	renewTimeout time.Duration
	log          *slog.Logger

	stopRenewer context.CancelFunc // nil when there is no renewer
	renewerDone chan struct{}      // closed when the renewer returns
	closeOnce   sync.Once

	mu      sync.Mutex
	entries map[leaseKey]*leaseEntry // guarded by mu
	closed  bool                     // guarded by mu
}

// leaseKey identifies one thread of one graph.
type leaseKey struct{ graph, thread string }

// leaseEntry is one key held (or lost and not yet released) by this process.
type leaseEntry struct {
	token   string
	blob    string
	leaseID string
	done    chan struct{} // closed once the lease is lost, released or the lock closed

	// Guarded by BlobLeaseThreadLock.mu.
	lost     bool
	failures int // consecutive transient renewal failures
	ended    bool
}

// end closes e.done once. Callers hold the lock's mu.
func (e *leaseEntry) end() {
	if !e.ended {
		e.ended = true
		close(e.done)
	}
}

var (
	_ lock.ThreadLock   = (*BlobLeaseThreadLock)(nil)
	_ lock.LossNotifier = (*BlobLeaseThreadLock)(nil)
)

// New validates opts, creates the container when opts.CreateContainer is
// set, and starts the renewer unless renewal is off. ctx bounds only the container creation.
// Close the lock to release its leases and stop the renewer.
func New(ctx context.Context, opts Options) (*BlobLeaseThreadLock, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	seconds, _ := leaseSeconds(opts.LeaseDuration)
	l := &BlobLeaseThreadLock{
		api:     azureLeases{c: opts.Container},
		seconds: seconds,
		prefix:  opts.BlobPrefix,
		log:     opts.Logger,
		entries: make(map[leaseKey]*leaseEntry),
	}
	if l.prefix == "" {
		l.prefix = DefaultBlobPrefix
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if opts.CreateContainer {
		if err := l.api.createContainer(ctx); err != nil {
			return nil, fmt.Errorf("create lock container: %w", err)
		}
	}
	switch {
	case seconds < 0:
		// Infinite leases are never renewed.
	case opts.DisableAutoRenew:
		l.log.Warn("thread lock auto-renew is off: a lease can expire mid-run and let another instance take the same thread",
			"lease_seconds", seconds)
	default:
		l.renewEvery = time.Duration(seconds) * time.Second / 3
		if opts.renewEvery > 0 {
			l.renewEvery = opts.renewEvery
		}
		l.renewTimeout = l.renewEvery
		if opts.renewTimeout > 0 {
			l.renewTimeout = opts.renewTimeout
		}
		ctx, cancel := context.WithCancel(context.Background())
		l.stopRenewer = cancel
		l.renewerDone = make(chan struct{})
		go l.renewLoop(ctx)
	}
	return l, nil
}

// Acquire takes the lease for (graphName, threadID). A key this process already tracks
// (held, or lost and not yet released) returns ok=false at once without calling storage.
// A lease held elsewhere is ok=false with a nil error; with a timeout > 0 Acquire polls with
// a bounded back-off until the deadline. After Close it returns lock.ErrClosed; storage
// failures are returned as errors.
func (l *BlobLeaseThreadLock) Acquire(ctx context.Context, graphName, threadID string, timeout time.Duration) (string, bool, error) {
	key := leaseKey{graphName, threadID}
	name := markerName(l.prefix, graphName, threadID)
	deadline := time.Now().Add(timeout)
	markerCreated := false
	for {
		if err := ctx.Err(); err != nil {
			return "", false, fmt.Errorf("acquire thread lock: %w", err)
		}
		l.mu.Lock()
		closed, tracked := l.closed, l.entries[key] != nil
		l.mu.Unlock()
		if closed {
			return "", false, lock.ErrClosed
		}
		if tracked {
			return "", false, nil
		}
		leaseID, err := l.api.acquire(ctx, name, l.seconds)
		switch {
		case err == nil:
			return l.track(key, name, leaseID)
		case isBlobNotFound(err) && !markerCreated:
			if err := l.api.createMarker(ctx, name); err != nil {
				return "", false, fmt.Errorf("create marker blob %q: %w", name, err)
			}
			markerCreated = true
			continue
		case isLeaseConflict(err):
			remaining := time.Until(deadline)
			if timeout <= 0 || remaining <= 0 {
				return "", false, nil
			}
			backoff := min(500*time.Millisecond, max(50*time.Millisecond, remaining/2))
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return "", false, fmt.Errorf("acquire thread lock: %w", ctx.Err())
			}
		default:
			return "", false, fmt.Errorf("acquire lease on %q: %w", name, err)
		}
	}
}

// track records a freshly acquired lease. If the lock closed or another local Acquire won
// the key meanwhile, it gives the new lease back.
func (l *BlobLeaseThreadLock) track(key leaseKey, name, leaseID string) (string, bool, error) {
	l.mu.Lock()
	if l.closed || l.entries[key] != nil {
		closed := l.closed
		l.mu.Unlock()
		l.releaseLease(key, name, leaseID)
		if closed {
			return "", false, lock.ErrClosed
		}
		return "", false, nil
	}
	token := lock.NewToken()
	l.entries[key] = &leaseEntry{token: token, blob: name, leaseID: leaseID, done: make(chan struct{})}
	l.mu.Unlock()
	return token, true, nil
}

// Release forgets the key and releases its lease when token is the current owner's. A lease
// already marked lost is only forgotten. Release never fails: a stale token or unknown key is
// a no-op, and a failed release is logged at debug and left to expire.
func (l *BlobLeaseThreadLock) Release(graphName, threadID, token string) {
	key := leaseKey{graphName, threadID}
	l.mu.Lock()
	e := l.entries[key]
	if e == nil || e.token != token {
		l.mu.Unlock()
		l.log.Debug("thread lock release ignored: not the current owner",
			"graph", graphName, "thread_id", threadID, "held", e != nil)
		return
	}
	delete(l.entries, key)
	e.end()
	lost := e.lost
	l.mu.Unlock()
	if !lost {
		l.releaseLease(key, e.blob, e.leaseID)
	}
}

// Lost returns a channel that is closed once token no longer holds (graphName, threadID):
// the lease was lost, released, or the lock closed. For a token that does not hold the key
// the channel is already closed.
func (l *BlobLeaseThreadLock) Lost(graphName, threadID, token string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[leaseKey{graphName, threadID}]; e != nil && e.token == token {
		return e.done
	}
	return closedChan
}

// closedChan is returned by Lost for tokens that hold nothing.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Close stops the renewer (waiting up to 5 s), releases every held lease that is not lost
// and forgets all keys. It is idempotent and always returns nil. Afterwards Acquire returns
// lock.ErrClosed and Release is a no-op.
func (l *BlobLeaseThreadLock) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		held := l.entries
		l.entries = make(map[leaseKey]*leaseEntry)
		for _, e := range held {
			e.end()
		}
		l.mu.Unlock()

		if l.stopRenewer != nil {
			l.stopRenewer()
			select {
			case <-l.renewerDone:
			case <-time.After(closeWait):
				l.log.Warn("thread lock renewer did not stop in time", "wait", closeWait)
			}
		}

		var wg sync.WaitGroup
		sem := make(chan struct{}, renewPool)
		for key, e := range held {
			if e.lost {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				l.releaseLease(key, e.blob, e.leaseID)
			}()
		}
		wg.Wait()
	})
	return nil
}

// releaseLease gives a lease back, best effort.
func (l *BlobLeaseThreadLock) releaseLease(key leaseKey, name, leaseID string) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := l.api.release(ctx, name, leaseID); err != nil {
		l.log.Debug("thread lock lease release failed; leaving it to expire",
			"graph", key.graph, "thread_id", key.thread, "error", azsdk.Summary(err))
	}
}
