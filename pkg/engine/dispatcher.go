package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// startDispatcher runs the embedded dispatcher under ctx: one receiver (receiveLoop) and
// Concurrency workers, all counted in e.wg.
func (e *Engine) startDispatcher(ctx context.Context) {
	work := make(chan Message)
	idle := make(chan struct{}, e.opts.Concurrency)
	e.wg.Add(1 + e.opts.Concurrency)
	go e.receiveLoop(ctx, work, idle)
	for range e.opts.Concurrency {
		go e.worker(ctx, work, idle)
	}
}

// worker is one embedded dispatcher worker: it runs the messages the receiver hands it, one
// at a time, and reports on idle when it is free again.
func (e *Engine) worker(ctx context.Context, work <-chan Message, idle chan<- struct{}) {
	defer e.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-work:
			if ctx.Err() != nil {
				return // left to come back after its visibility timeout, as on Close
			}
			if m.DequeueCount <= e.opts.MaxDequeueCount || !e.toPoison(ctx, m) {
				e.handleMessage(ctx, m)
			}
			idle <- struct{}{} // never blocks: at most Concurrency workers are busy
		}
	}
}

// receiveLoop is the dispatcher's one receiver: it receives as many messages as workers are
// free (at most MaxReceive per call) and hands each to a free worker at once, so no message
// waits hidden without its visibility being renewed. A receive that fills its batch is
// followed by another; after one that comes back short or fails, the next waits for a local
// enqueue (kick) or a back-off that starts at PollInterval/32 and doubles up to
// PollInterval (for items enqueued by other processes or made visible by a delay). So an
// idle engine polls the queue about once per PollInterval however many workers it has.
func (e *Engine) receiveLoop(ctx context.Context, work chan<- Message, idle <-chan struct{}) {
	defer e.wg.Done()
	base := max(e.opts.PollInterval/32, time.Millisecond)
	free := e.opts.Concurrency
	var (
		delay time.Duration // the current back-off; 0 after a full batch or a kick
		next  time.Time     // no receive before then, unless kicked
	)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		free += drain(idle)
		if free == 0 {
			select {
			case <-ctx.Done():
				return
			case <-idle:
				free++
				continue
			}
		}
		if wait := time.Until(next); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-e.kick:
				delay = 0
			case <-timer.C:
			case <-idle: // a worker came free: note it and wait on
				free++
				timer.Stop()
				continue
			}
			timer.Stop()
		}
		drain(e.kick) // this receive covers every enqueue so far
		n := min(free, MaxReceive)
		msgs, err := e.queue.Receive(ctx, n, e.opts.VisibilityTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.Warn("receive work items", "error", err.Error())
		}
		for _, m := range msgs {
			select {
			case <-ctx.Done():
				return // the rest come back after their visibility timeout, as on Close
			case work <- m:
				free--
			}
		}
		switch {
		case err == nil && len(msgs) == n:
			delay = 0
		case len(msgs) > 0 || delay == 0:
			delay = base
		default:
			delay = min(2*delay, e.opts.PollInterval)
		}
		next = time.Now().Add(delay)
	}
}

// drain takes every value waiting on ch without blocking and returns how many it took.
func drain(ch <-chan struct{}) int {
	for n := 0; ; n++ {
		select {
		case <-ch:
		default:
			return n
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
	e.handleMessageUntil(ctx, m, time.Time{})
}

// handleMessageUntil is handleMessage, but renews the message's visibility only until until
// (zero: for as long as the handling runs): a handling still running then — a step that
// ignores its context's end — no longer keeps the message from coming back to another
// consumer after its visibility timeout, as if its process had been killed
// (start_receive.go).
func (e *Engine) handleMessageUntil(ctx context.Context, m Message, until time.Time) {
	r := &renewal{e: e, ctx: context.WithoutCancel(ctx), cur: m, every: max(e.opts.VisibilityTimeout/3, time.Millisecond), until: until}
	r.mu.Lock() // the first renewal waits until timer is set
	r.timer = time.AfterFunc(r.every, r.renew)
	r.mu.Unlock()
	// However the handling ends: a handler that takes its goroutine down (runtime.Goexit)
	// must leave the message to come back, as a dead process would.
	defer r.stop()
	err := e.HandleWorkItem(ctx, m.Body, m.DequeueCount)
	cur := r.stop()
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

// renewal keeps one message hidden while it is handled: a timer (no goroutine of its own)
// extends its visibility every third of the visibility timeout until stop (or until until).
type renewal struct {
	e     *Engine
	ctx   context.Context
	every time.Duration
	until time.Time // no renewal after it (zero: none is refused)
	timer *time.Timer

	mu      sync.Mutex
	cur     Message // guarded by mu: the latest pop receipt
	stopped bool    // guarded by mu
}

// renew extends the message's visibility and arms the next renewal, unless stopped.
func (r *renewal) renew() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || (!r.until.IsZero() && time.Now().After(r.until)) {
		return
	}
	next, err := r.e.queue.Extend(r.ctx, r.cur, r.e.opts.VisibilityTimeout)
	if err == nil {
		r.cur = next
	} else {
		r.e.log.Warn("renew work item visibility", "message_id", r.cur.ID, "error", err.Error())
	}
	r.timer.Reset(r.every)
}

// stop ends the renewals and returns the message with its latest pop receipt. An extension
// under way finishes first (it holds mu), and none starts after: the receipt returned is
// the one the queue holds.
func (r *renewal) stop() Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.timer.Stop()
	return r.cur
}

// retryLater enqueues a copy of a failed work item with its retry count raised, after a
// back-off of PollInterval doubling per retry (at most VisibilityTimeout). It reports
// whether the copy is queued.
func (e *Engine) retryLater(ctx context.Context, body []byte) bool {
	it, br, err := decodeWorkItem(body)
	if err != nil {
		return false
	}
	delay := e.opts.PollInterval
	for i := int64(0); i < it.Retry && delay < e.opts.VisibilityTimeout; i++ {
		delay *= 2
	}
	delay = min(delay, e.opts.VisibilityTimeout)
	it.Retry++
	next := encodeWorkItem(it)
	if br != nil { // a fan-out's branch keeps its members (branch_worker.go)
		br.Retry = it.Retry
		next = encodeBranchWork(*br)
	}
	if err := e.queue.Enqueue(ctx, next, delay); err != nil {
		e.log.Warn("re-enqueue failed work item", "run_id", it.RunID, "error", err.Error())
		return false
	}
	if e.started.Load() {
		time.AfterFunc(delay, e.wake)
	}
	return true
}
