package enginetest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// OpCounts counts storage operations. Every method call is one operation (one request to
// the service), whatever it carries.
type OpCounts struct {
	// Gets, Submits and Queries count the Store's operations.
	Gets, Submits, Queries atomic.Int64
	// Enqueues, Receives and Deletes count the WorkQueue's operations.
	Enqueues, Receives, Deletes atomic.Int64
	// PayloadPuts and PayloadGets count the PayloadStore's puts and gets.
	PayloadPuts, PayloadGets atomic.Int64
	// PayloadDeletes counts the PayloadStore's deletes; EmptyReceives the receives that
	// returned no message.
	PayloadDeletes, EmptyReceives atomic.Int64
	// Received counts the messages the receives returned (a receive may return a batch).
	Received atomic.Int64
}

// Table returns the number of table operations (Get + Submit + Query).
func (c *OpCounts) Table() int64 { return c.Gets.Load() + c.Submits.Load() + c.Queries.Load() }

// Queue returns the number of queue operations (Enqueue + Receive + Delete), not counting
// receives that returned nothing (an idle poll is not work).
func (c *OpCounts) Queue() int64 {
	return c.Enqueues.Load() + c.Receives.Load() - c.EmptyReceives.Load() + c.Deletes.Load()
}

// Payload returns the number of payload store operations.
func (c *OpCounts) Payload() int64 {
	return c.PayloadPuts.Load() + c.PayloadGets.Load() + c.PayloadDeletes.Load()
}

// Total returns all operations.
func (c *OpCounts) Total() int64 { return c.Table() + c.Queue() + c.Payload() }

// Reset zeroes every counter.
func (c *OpCounts) Reset() {
	for _, v := range []*atomic.Int64{&c.Gets, &c.Submits, &c.Queries, &c.Enqueues, &c.Receives,
		&c.Deletes, &c.PayloadPuts, &c.PayloadGets, &c.PayloadDeletes, &c.EmptyReceives, &c.Received} {
		v.Store(0)
	}
}

// CountingStore is an engine.Store that counts the operations it forwards.
type CountingStore struct {
	engine.Store
	// Counts receives the counts.
	Counts *OpCounts
}

// Get counts and forwards.
func (s CountingStore) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	s.Counts.Gets.Add(1)
	return s.Store.Get(ctx, pk, rk)
}

// Submit counts and forwards.
func (s CountingStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	s.Counts.Submits.Add(1)
	return s.Store.Submit(ctx, ops)
}

// Query counts and forwards.
func (s CountingStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	s.Counts.Queries.Add(1)
	return s.Store.Query(ctx, q)
}

// CountingQueue is an engine.WorkQueue that counts the operations it forwards.
type CountingQueue struct {
	engine.WorkQueue
	// Counts receives the counts.
	Counts *OpCounts
}

// Enqueue counts and forwards.
func (q CountingQueue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	q.Counts.Enqueues.Add(1)
	return q.WorkQueue.Enqueue(ctx, body, delay)
}

// Receive counts and forwards.
func (q CountingQueue) Receive(ctx context.Context, max int, vis time.Duration) ([]engine.Message, error) {
	q.Counts.Receives.Add(1)
	msgs, err := q.WorkQueue.Receive(ctx, max, vis)
	q.Counts.Received.Add(int64(len(msgs)))
	if len(msgs) == 0 {
		q.Counts.EmptyReceives.Add(1)
	}
	return msgs, err
}

// PoisonQueue returns the wrapped queue's poison queue (engine.PoisonQueuer), counted in
// the same OpCounts; nil when it has none.
func (q CountingQueue) PoisonQueue() engine.WorkQueue {
	if p := poisonOf(q.WorkQueue); p != nil {
		return CountingQueue{WorkQueue: p, Counts: q.Counts}
	}
	return nil
}

// Delete counts and forwards.
func (q CountingQueue) Delete(ctx context.Context, msg engine.Message) error {
	q.Counts.Deletes.Add(1)
	return q.WorkQueue.Delete(ctx, msg)
}

// CountingPayloads is an engine.PayloadStore that counts the operations it forwards.
type CountingPayloads struct {
	engine.PayloadStore
	// Counts receives the counts.
	Counts *OpCounts
}

// Put counts and forwards.
func (p CountingPayloads) Put(ctx context.Context, key string, data []byte) error {
	p.Counts.PayloadPuts.Add(1)
	return p.PayloadStore.Put(ctx, key, data)
}

// Get counts and forwards.
func (p CountingPayloads) Get(ctx context.Context, key string) ([]byte, error) {
	p.Counts.PayloadGets.Add(1)
	return p.PayloadStore.Get(ctx, key)
}

// DeletePrefix counts and forwards.
func (p CountingPayloads) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	p.Counts.PayloadDeletes.Add(1)
	return p.PayloadStore.DeletePrefix(ctx, prefix)
}
