package memory

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Queue is an in-memory engine.WorkQueue with Azure Queue semantics (visibility timeout,
// dequeue count, pop receipts). It has a poison queue (engine.PoisonQueuer), itself a
// Queue, where the embedded dispatcher moves messages delivered too often. For tests and
// the embedded default, not production.
type Queue struct {
	clock func() time.Time
	// poison is the poison queue; nil for a poison queue itself.
	poison *Queue

	mu   sync.Mutex
	heap msgHeap          // ordered by visibility time, then enqueue order; guarded by mu
	byID map[string]*qmsg // guarded by mu
	seq  uint64           // guarded by mu
}

type qmsg struct {
	id        string
	body      []byte
	visibleAt time.Time
	order     uint64
	dequeues  int64
	receipt   string
	index     int
}

var (
	_ engine.WorkQueue    = (*Queue)(nil)
	_ engine.PoisonQueuer = (*Queue)(nil)
)

// NewQueue returns an empty queue with an empty poison queue.
func NewQueue(opts ...Option) *Queue {
	c := newConfig(opts)
	return &Queue{clock: c.clock, byID: map[string]*qmsg{}, poison: &Queue{clock: c.clock, byID: map[string]*qmsg{}}}
}

// PoisonQueue implements engine.PoisonQueuer: the queue's poison queue (a poison queue has
// none: nil).
func (q *Queue) PoisonQueue() engine.WorkQueue {
	if q.poison == nil {
		return nil
	}
	return q.poison
}

// Enqueue implements engine.WorkQueue.
func (q *Queue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(body) > engine.MaxMessageBytes {
		return fmt.Errorf("enqueue: message of %d bytes: %w", len(body), engine.ErrTooLarge)
	}
	if delay < 0 {
		delay = 0
	}
	if delay > engine.MaxDelay {
		return fmt.Errorf("enqueue: delay %s above %s", delay, engine.MaxDelay)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	m := &qmsg{id: strconv.FormatUint(q.seq, 10), body: slices.Clone(body), visibleAt: q.clock().Add(delay), order: q.seq}
	q.byID[m.id] = m
	heap.Push(&q.heap, m)
	return nil
}

// Receive implements engine.WorkQueue.
func (q *Queue) Receive(ctx context.Context, max int, visibility time.Duration) ([]engine.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if max < 1 || max > engine.MaxReceive {
		return nil, fmt.Errorf("receive: max %d outside 1..%d", max, engine.MaxReceive)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock()
	var out []engine.Message
	var taken []*qmsg // off the heap until the end: each message once per call, even at visibility 0
	for len(out) < max && len(q.heap) > 0 {
		m := q.heap[0]
		if m.visibleAt.After(now) {
			break
		}
		heap.Pop(&q.heap)
		taken = append(taken, m)
		q.seq++
		m.dequeues++
		m.receipt = strconv.FormatUint(q.seq, 10)
		m.visibleAt = now.Add(visibility)
		out = append(out, engine.Message{ID: m.id, PopReceipt: m.receipt, Body: slices.Clone(m.body), DequeueCount: m.dequeues})
	}
	for _, m := range taken {
		// Enqueue order is kept among messages made visible again at the same time.
		heap.Push(&q.heap, m)
	}
	return out, nil
}

// Delete implements engine.WorkQueue.
func (q *Queue) Delete(ctx context.Context, msg engine.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.byID[msg.ID]
	if m == nil || m.receipt != msg.PopReceipt {
		return fmt.Errorf("delete message %s: %w", msg.ID, engine.ErrNotFound)
	}
	heap.Remove(&q.heap, m.index)
	delete(q.byID, m.id)
	return nil
}

// Extend implements engine.WorkQueue.
func (q *Queue) Extend(ctx context.Context, msg engine.Message, visibility time.Duration) (engine.Message, error) {
	if err := ctx.Err(); err != nil {
		return engine.Message{}, err
	}
	if visibility < 0 || visibility > engine.MaxDelay {
		return engine.Message{}, fmt.Errorf("extend message %s: visibility %s outside 0..%s", msg.ID, visibility, engine.MaxDelay)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.byID[msg.ID]
	if m == nil || m.receipt != msg.PopReceipt {
		return engine.Message{}, fmt.Errorf("extend message %s: %w", msg.ID, engine.ErrNotFound)
	}
	q.seq++
	m.receipt = strconv.FormatUint(q.seq, 10)
	m.visibleAt = q.clock().Add(visibility)
	heap.Fix(&q.heap, m.index)
	msg.PopReceipt = m.receipt
	return msg, nil
}

// Len returns the number of messages, visible or not (for tests).
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.heap)
}

type msgHeap []*qmsg

func (h msgHeap) Len() int { return len(h) }
func (h msgHeap) Less(i, j int) bool {
	if c := h[i].visibleAt.Compare(h[j].visibleAt); c != 0 {
		return c < 0
	}
	return h[i].order < h[j].order
}
func (h msgHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *msgHeap) Push(x any) {
	m := x.(*qmsg)
	m.index = len(*h)
	*h = append(*h, m)
}
func (h *msgHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return m
}
