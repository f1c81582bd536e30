package lock

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"
)

// InProcessThreadLock is the default ThreadLock: one lock per (graphName, threadID) inside
// one process. It does not coordinate across worker processes, scaled-out instances or
// restarts; use a distributed lock for that (pkg/azure/bloblock on Azure Blob leases).
//
// The zero value is ready to use. Entries are dropped on release, so memory is bounded by
// the number of keys held (and waited for) at once.
type InProcessThreadLock struct {
	// Logger receives debug records for stale releases. Nil means slog.Default(). Set it
	// before first use.
	Logger *slog.Logger

	// shards spread keys over independent mutexes: under many concurrent requests one global
	// mutex convoys (its starvation mode hands it to waiters that are not running).
	shards [lockShards]lockShard
}

const lockShards = 64

type lockShard struct {
	mu   sync.Mutex
	held map[lockKey]*heldEntry // guarded by mu
}

var shardSeed = maphash.MakeSeed()

func (l *InProcessThreadLock) shard(k lockKey) *lockShard {
	var h maphash.Hash
	h.SetSeed(shardSeed)
	h.WriteString(k.graph)
	h.WriteByte(0)
	h.WriteString(k.thread)
	return &l.shards[h.Sum64()%lockShards]
}

// lockKey identifies one thread of one graph.
type lockKey struct{ graph, thread string }

// heldEntry is one held key; freed is closed when it is released so waiters wake up.
type heldEntry struct {
	token string
	freed chan struct{}
}

var _ ThreadLock = (*InProcessThreadLock)(nil)

// NewInProcessThreadLock returns an empty in-process lock logging through slog.Default().
func NewInProcessThreadLock() *InProcessThreadLock {
	return &InProcessThreadLock{}
}

// Acquire takes the lock for (graphName, threadID). A timeout of 0 is non-blocking; a larger
// timeout waits up to that long for the holder to release, without spinning. It returns
// ok=false and a nil error when the key is still held at the deadline, and ctx's error
// (wrapped) when ctx ends first.
func (l *InProcessThreadLock) Acquire(ctx context.Context, graphName, threadID string, timeout time.Duration) (string, bool, error) {
	key := lockKey{graphName, threadID}
	var timer *time.Timer
	sh := l.shard(key)
	// Built outside the mutex: the critical section stays a map lookup.
	mine := &heldEntry{token: NewToken(), freed: make(chan struct{})}
	for {
		if err := ctx.Err(); err != nil {
			return "", false, fmt.Errorf("acquire thread lock: %w", err)
		}
		sh.mu.Lock()
		e, busy := sh.held[key]
		if !busy {
			if sh.held == nil {
				sh.held = make(map[lockKey]*heldEntry)
			}
			sh.held[key] = mine
			sh.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return mine.token, true, nil
		}
		sh.mu.Unlock()
		if timeout <= 0 {
			return "", false, nil
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-e.freed:
			// Released: race the other waiters for it.
		case <-timer.C:
			return "", false, nil
		case <-ctx.Done():
			return "", false, fmt.Errorf("acquire thread lock: %w", ctx.Err())
		}
	}
}

// Release frees the lock when token is the current owner's. An unknown key or a stale token
// is a no-op logged at debug.
func (l *InProcessThreadLock) Release(graphName, threadID, token string) {
	key := lockKey{graphName, threadID}
	sh := l.shard(key)
	sh.mu.Lock()
	e, ok := sh.held[key]
	if ok && e.token == token {
		delete(sh.held, key)
		close(e.freed)
		sh.mu.Unlock()
		return
	}
	sh.mu.Unlock()
	l.logger().Debug("thread lock release ignored: not the current owner",
		"graph", graphName, "thread_id", threadID, "held", ok)
}

// size returns the number of tracked keys (for tests).
func (l *InProcessThreadLock) size() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.held)
		sh.mu.Unlock()
	}
	return n
}

func (l *InProcessThreadLock) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}
