package lock

import (
	"context"
	"errors"
	"time"
)

// ThreadLock serialises work on one conversation thread of one graph. Locks are keyed by the
// pair (graphName, threadID): the same thread id on two graphs never contends.
//
// Implementations must be safe for concurrent use.
type ThreadLock interface {
	// Acquire tries to take the lock for (graphName, threadID). A timeout of 0 is
	// non-blocking; a larger timeout waits up to that long. On success it returns a
	// non-empty opaque owner token and ok=true. When the lock is held elsewhere after the
	// timeout it returns ok=false and a nil error: contention is not an error. Any other
	// failure (storage unreachable, lock closed) is returned as an error and leaves
	// nothing held.
	Acquire(ctx context.Context, graphName, threadID string, timeout time.Duration) (token string, ok bool, err error)

	// Release frees the lock if token is the current owner's token. It never fails: an
	// unknown key or a stale token is a no-op (logged at debug), so a late caller cannot
	// free a newer owner's lock.
	Release(graphName, threadID, token string)
}

// ErrClosed is returned by Acquire on a lock that has been closed.
var ErrClosed = errors.New("thread lock is closed")

// ErrLockLost is the cancellation cause of a context from ContextWithLoss whose lock was
// lost.
var ErrLockLost = errors.New("thread lock was lost")

// LossNotifier is an optional ThreadLock capability for locks that can be lost while held,
// such as a blob lease that could not be renewed. Check for it with a type assertion.
type LossNotifier interface {
	// Lost returns a channel that is closed once token no longer holds
	// (graphName, threadID): the lock was lost, released, or the lock closed. For a token
	// that holds nothing the channel is already closed.
	Lost(graphName, threadID, token string) <-chan struct{}
}
