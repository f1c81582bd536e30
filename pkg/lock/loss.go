package lock

import "context"

// ContextWithLoss returns a context for work done under a held lock. When l is a
// LossNotifier, the context is cancelled with cause ErrLockLost once the hold ends (lease
// lost, lock released, or l closed), so the work can stop before writing. For other locks it
// is ctx with a cancel function. Call cancel when the work ends.
func ContextWithLoss(ctx context.Context, l ThreadLock, graphName, threadID, token string) (context.Context, context.CancelFunc) {
	n, ok := l.(LossNotifier)
	if !ok {
		return context.WithCancel(ctx)
	}
	lost := n.Lost(graphName, threadID, token)
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-lost:
			cancel(ErrLockLost)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
