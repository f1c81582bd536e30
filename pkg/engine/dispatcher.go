package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// worker is one embedded dispatcher worker: it receives one work item at a time and runs it
// with HandleWorkItem, deleting the message when done. Idle, it sleeps until a local enqueue
// wakes it or PollInterval passes (for items enqueued elsewhere or made visible by a delay).
func (e *Engine) worker(ctx context.Context, id int) {
	defer e.wg.Done()
	idle := time.NewTimer(e.opts.PollInterval)
	defer idle.Stop()
	for ctx.Err() == nil {
		msgs, err := e.queue.Receive(ctx, 1, e.opts.VisibilityTimeout)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("receive work items", "worker", id, "error", err.Error())
		}
		if len(msgs) == 0 {
			idle.Reset(e.opts.PollInterval)
			select {
			case <-ctx.Done():
			case <-e.kick:
			case <-idle.C:
			}
			continue
		}
		for _, m := range msgs {
			if m.DequeueCount > e.opts.MaxDequeueCount && e.toPoison(ctx, m) {
				continue
			}
			e.handleMessage(ctx, m)
		}
	}
}

// toPoison moves a message received more than MaxDequeueCount times to the queue's poison
// queue, as the Functions host does, and the repair pass puts it back on the work queue if
// its run still needs it. It reports false when the queue has no poison queue (the message
// is then handled as any other); a move that fails leaves the message hidden until its
// visibility timeout, to be moved then.
func (e *Engine) toPoison(ctx context.Context, m Message) bool {
	pq := poisonQueueOf(e.queue)
	if pq == nil {
		return false
	}
	ctx = context.WithoutCancel(ctx)
	if err := pq.Enqueue(ctx, m.Body, 0); err != nil {
		e.log.Warn("move work item to the poison queue", "message_id", m.ID, "dequeue_count", m.DequeueCount, "error", err.Error())
		return true // hidden until its visibility timeout: try again then
	}
	e.log.Warn("work item moved to the poison queue", "message_id", m.ID, "dequeue_count", m.DequeueCount)
	if err := e.queue.Delete(ctx, m); err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("delete poisoned work item", "message_id", m.ID, "error", err.Error())
	}
	return true
}

// handleMessage runs one message, keeping it hidden meanwhile (a renewal every third of the
// visibility timeout), so that the queue redelivers it only when this worker died. A
// handling that fails re-enqueues the item as a fresh message marked as retried (after a
// back-off) and deletes this one, so failures do not use up MaxDequeueCount while the queue
// works; deaths do. Neither fails the run: the engine counts restarts on the run itself.
func (e *Engine) handleMessage(ctx context.Context, m Message) {
	var (
		mu  sync.Mutex
		cur = m // guarded by mu: the latest pop receipt
	)
	stop := make(chan struct{})
	var renewing sync.WaitGroup
	renewing.Add(1)
	go func() {
		defer renewing.Done()
		t := time.NewTicker(max(e.opts.VisibilityTimeout/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			mu.Lock()
			next, err := e.queue.Extend(context.WithoutCancel(ctx), cur, e.opts.VisibilityTimeout)
			if err == nil {
				cur = next
			} else {
				e.log.Warn("renew work item visibility", "message_id", m.ID, "error", err.Error())
			}
			mu.Unlock()
		}
	}()
	stopRenewal := sync.OnceFunc(func() {
		close(stop)
		renewing.Wait()
	})
	// However the handling ends: a handler that takes its goroutine down (runtime.Goexit)
	// must leave the message to come back, as a dead process would.
	defer stopRenewal()
	err := e.HandleWorkItem(ctx, m.Body, m.DequeueCount)
	stopRenewal()
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("work item failed; re-enqueued", "message_id", m.ID, "dequeue_count", m.DequeueCount, "error", err.Error())
		}
		if !e.retryLater(context.WithoutCancel(ctx), m.Body) {
			return // left for redelivery after its visibility timeout
		}
	}
	if err := e.queue.Delete(context.WithoutCancel(ctx), cur); err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("delete work item", "message_id", m.ID, "error", err.Error())
	}
}

// retryLater enqueues a copy of a failed work item with its retry count raised, after a
// back-off of PollInterval doubling per retry (at most VisibilityTimeout). It reports
// whether the copy is queued.
func (e *Engine) retryLater(ctx context.Context, body []byte) bool {
	it, err := decodeWorkItem(body)
	if err != nil {
		return false
	}
	delay := e.opts.PollInterval
	for i := int64(0); i < it.Retry && delay < e.opts.VisibilityTimeout; i++ {
		delay *= 2
	}
	delay = min(delay, e.opts.VisibilityTimeout)
	it.Retry++
	if err := e.queue.Enqueue(ctx, encodeWorkItem(it), delay); err != nil {
		e.log.Warn("re-enqueue failed work item", "run_id", it.RunID, "error", err.Error())
		return false
	}
	if e.started.Load() {
		time.AfterFunc(delay, e.wake)
	}
	return true
}
