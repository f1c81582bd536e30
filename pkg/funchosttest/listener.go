package funchosttest

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// listener is the host's queue listener for one queue-triggered function on a storage queue
// (WebJobs QueueListener and QueueProcessor): it receives batches hidden for the listener's
// visibility timeout, renews that while each invocation runs, deletes on success, releases
// with host.json's visibilityTimeout on failure, and moves a message to <queue>-poison on
// its maxDequeueCount-th failure (or when it is dequeued more often than that, or cannot be
// decoded).
type listener struct {
	e             *Emulator
	f             *function
	conn, name    string
	queue, poison *azqueue.QueueClient
	wake          chan struct{}
}

func (l *listener) run(ctx context.Context) {
	defer l.e.wg.Done()
	q := l.e.cfg.Queues
	batch, threshold := q.Batch(), q.Threshold()
	finished := make(chan struct{}, threshold+maxQueueBatchSize+1)
	inflight := 0
	backoff := pollBackoff{min: minPollingInterval, max: q.MaxPolling()}
	found := false
	defer func() {
		for ; inflight > 0; inflight-- {
			<-finished
		}
	}()
	for ctx.Err() == nil {
		for drained := false; !drained; {
			select {
			case <-finished:
				inflight--
			default:
				drained = true
			}
		}
		resp, err := l.queue.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{
			NumberOfMessages: to32(batch), VisibilityTimeout: seconds(l.e.listenerVisibility(), 1)})
		if err != nil && ctx.Err() == nil && !queueerror.HasCode(err, queueerror.QueueNotFound) {
			l.e.logf("funchosttest: %s: receive from %s: %v", l.f.Name, l.name, err)
		}
		if err != nil || len(resp.Messages) == 0 {
			l.sleep(ctx, backoff.next(found))
			found = false
			continue
		}
		found = true
		for _, m := range resp.Messages {
			if m == nil || m.MessageID == nil || m.PopReceipt == nil {
				continue
			}
			inflight++
			go func() {
				defer func() { finished <- struct{}{} }()
				l.process(ctx, m)
			}()
		}
		for inflight > threshold {
			<-finished
			inflight--
		}
	}
}

// sleep waits d, or less when the emulator adds a message to the queue.
func (l *listener) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-l.wake:
	}
}

// process handles one received message (QueueListener.ProcessMessageAsync).
func (l *listener) process(ctx context.Context, m *azqueue.DequeuedMessage) {
	e, f := l.e, l.f
	msg := queueMessage{id: *m.MessageID, popReceipt: *m.PopReceipt, text: deref(m.MessageText),
		inserted: derefTime(m.InsertionTime), expires: derefTime(m.ExpirationTime), visible: derefTime(m.TimeNextVisible)}
	if m.DequeueCount != nil {
		msg.dequeueCount = *m.DequeueCount
	}
	max := int64(e.cfg.MaxDequeueCount)
	if msg.dequeueCount > max { // BeginProcessingMessageAsync
		l.toPoison(ctx, msg, msg.popReceipt)
		return
	}
	content, ok := e.decodeFromQueue(msg.text)
	if !ok {
		e.logf("funchosttest: %s: message %s is not valid base64; moving it to %s-poison", f.Name, msg.id, l.name)
		l.toPoison(ctx, msg, msg.popReceipt)
		return
	}
	r := &renewal{l: l, msg: msg, receipt: msg.popReceipt}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.run(rctx)
	}()
	res, err := e.invoke(ctx, f, e.queuePayload(f, content, msg))
	if err == nil {
		err = e.applyOutputs(f, res)
	}
	stop()
	wg.Wait()
	receipt := r.current()
	// CompleteProcessingMessageAsync; completion is not cut short by shutdown.
	done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	switch {
	case err == nil:
		if _, err := l.queue.DeleteMessage(done, msg.id, receipt, nil); err != nil && !ignorable(err) {
			e.logf("funchosttest: %s: delete message %s: %v", f.Name, msg.id, err)
		}
	case ctx.Err() == nil && msg.dequeueCount >= max:
		e.logf("funchosttest: %s: message %s attempt %d failed: %v", f.Name, msg.id, msg.dequeueCount, err)
		l.toPoison(done, msg, receipt)
	default:
		if ctx.Err() == nil {
			e.logf("funchosttest: %s: message %s attempt %d failed: %v", f.Name, msg.id, msg.dequeueCount, err)
		}
		_, err := l.queue.UpdateMessage(done, msg.id, receipt, msg.text,
			&azqueue.UpdateMessageOptions{VisibilityTimeout: seconds(e.cfg.Queues.VisibilityTimeout, 0)})
		if err != nil && !ignorable(err) {
			e.logf("funchosttest: %s: release message %s: %v", f.Name, msg.id, err)
		}
	}
}

// toPoison copies the message text to <queue>-poison (creating it) and deletes the original.
func (l *listener) toPoison(ctx context.Context, msg queueMessage, receipt string) {
	e := l.e
	e.logf("funchosttest: %s: Message has reached MaxDequeueCount of %d. Moving message to queue '%s-poison'.", l.f.Name, e.cfg.MaxDequeueCount, l.name)
	if err := e.storage.ensure(ctx, l.conn, l.name+"-poison", l.poison); err != nil {
		e.logf("funchosttest: %s: %v", l.f.Name, err)
		return
	}
	if _, err := l.poison.EnqueueMessage(ctx, msg.text, nil); err != nil {
		e.logf("funchosttest: %s: poison message %s: %v", l.f.Name, msg.id, err)
		return
	}
	e.storage.notify(l.name + "-poison")
	if _, err := l.queue.DeleteMessage(ctx, msg.id, receipt, nil); err != nil && !ignorable(err) {
		e.logf("funchosttest: %s: delete poisoned message %s: %v", l.f.Name, msg.id, err)
	}
}

// renewal keeps a message hidden while its invocation runs (UpdateQueueMessageVisibilityCommand):
// every half of the listener's visibility timeout it sets the visibility to that timeout
// again, halving the interval (not below one minute, or the normal interval if shorter)
// after a failed update and stopping once the message is lost.
type renewal struct {
	l       *listener
	msg     queueMessage
	mu      sync.Mutex
	receipt string
}

func (r *renewal) current() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.receipt
}

func (r *renewal) run(ctx context.Context) {
	visibility := r.l.e.listenerVisibility()
	normal := visibility / 2
	minimum := min(minVisibilityRenewal, normal)
	interval := normal
	for {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		resp, err := r.l.queue.UpdateMessage(ctx, r.msg.id, r.current(), r.msg.text,
			&azqueue.UpdateMessageOptions{VisibilityTimeout: seconds(visibility, 1)})
		switch {
		case err == nil && resp.PopReceipt != nil:
			r.mu.Lock()
			r.receipt = *resp.PopReceipt
			r.mu.Unlock()
			r.l.e.renewals.Add(1)
			interval = normal
		case err != nil && ignorable(err):
			return // ownership lost, or the emulator is closing
		case err != nil:
			r.l.e.logf("funchosttest: %s: renew visibility of message %s: %v", r.l.f.Name, r.msg.id, err)
			interval = max(interval/2, minimum)
		}
	}
}

// pollBackoff is the listener's RandomizedExponentialBackoffStrategy: after a poll that found
// messages the next empty poll waits the minimum; each further empty poll waits about twice
// as long again (±20 %), up to the maximum.
type pollBackoff struct {
	min, max, current time.Duration
	exponent          uint
}

func (b *pollBackoff) next(foundSinceLastDelay bool) time.Duration {
	if foundSinceLastDelay {
		b.current, b.exponent = b.min, 1
		return b.current
	}
	if b.current == b.max {
		return b.current
	}
	d := b.min
	if b.exponent > 0 {
		factor := 0.8 + 0.4*rand.Float64()
		d += time.Duration(factor * float64(uint64(1)<<(b.exponent-1)) * float64(b.min))
	}
	if d < b.max {
		b.current = d
		b.exponent++
	} else {
		b.current = b.max
	}
	return b.current
}

func to32(n int) *int32 { v := int32(n); return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
