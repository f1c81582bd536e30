package enginetest

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// ErrUnavailable is the error of an operation that an Outage failed.
var ErrUnavailable = errors.New("enginetest: storage unavailable")

// Storage operations an Outage can fail, as passed to Outage.Affects.
const (
	OpStoreGet, OpStoreSubmit, OpStoreQuery                      = "store.get", "store.submit", "store.query"
	OpQueueEnqueue, OpQueueReceive, OpQueueDelete, OpQueueExtend = "queue.enqueue", "queue.receive", "queue.delete", "queue.extend"
	OpPayloadPut, OpPayloadGet, OpPayloadDelete                  = "payload.put", "payload.get", "payload.delete"
)

// Outage makes storage unreachable on demand, as when the storage account cannot be
// reached: while it is down, every operation of the stores and queues it wraps (a poison
// queue included) fails with ErrUnavailable before reaching them, so nothing is written.
// Safe for concurrent use; set Affects before wrapping.
type Outage struct {
	// Affects, if set, limits the outage to the operations it returns true for (OpStoreGet,
	// ...); nil means every operation.
	Affects func(op string) bool

	down atomic.Bool
}

// Begin takes storage down.
func (o *Outage) Begin() { o.down.Store(true) }

// End brings storage back.
func (o *Outage) End() { o.down.Store(false) }

// Down reports whether storage is down.
func (o *Outage) Down() bool { return o.down.Load() }

// fail returns ErrUnavailable when op fails now.
func (o *Outage) fail(op string) error {
	if o.down.Load() && (o.Affects == nil || o.Affects(op)) {
		return ErrUnavailable
	}
	return nil
}

// Store wraps s.
func (o *Outage) Store(s engine.Store) engine.Store { return outageStore{Store: s, o: o} }

// Queue wraps q, and its poison queue (engine.PoisonQueuer) when it has one.
func (o *Outage) Queue(q engine.WorkQueue) engine.WorkQueue { return outageQueue{WorkQueue: q, o: o} }

// Payloads wraps p.
func (o *Outage) Payloads(p engine.PayloadStore) engine.PayloadStore {
	return outagePayloads{PayloadStore: p, o: o}
}

type outageStore struct {
	engine.Store
	o *Outage
}

func (s outageStore) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	if err := s.o.fail(OpStoreGet); err != nil {
		return engine.Entity{}, err
	}
	return s.Store.Get(ctx, pk, rk)
}

func (s outageStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	if err := s.o.fail(OpStoreSubmit); err != nil {
		return nil, err
	}
	return s.Store.Submit(ctx, ops)
}

func (s outageStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	if err := s.o.fail(OpStoreQuery); err != nil {
		return engine.Page{}, err
	}
	return s.Store.Query(ctx, q)
}

type outageQueue struct {
	engine.WorkQueue
	o *Outage
}

func (q outageQueue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	if err := q.o.fail(OpQueueEnqueue); err != nil {
		return err
	}
	return q.WorkQueue.Enqueue(ctx, body, delay)
}

func (q outageQueue) Receive(ctx context.Context, max int, vis time.Duration) ([]engine.Message, error) {
	if err := q.o.fail(OpQueueReceive); err != nil {
		return nil, err
	}
	return q.WorkQueue.Receive(ctx, max, vis)
}

func (q outageQueue) Delete(ctx context.Context, msg engine.Message) error {
	if err := q.o.fail(OpQueueDelete); err != nil {
		return err
	}
	return q.WorkQueue.Delete(ctx, msg)
}

func (q outageQueue) Extend(ctx context.Context, msg engine.Message, vis time.Duration) (engine.Message, error) {
	if err := q.o.fail(OpQueueExtend); err != nil {
		return engine.Message{}, err
	}
	return q.WorkQueue.Extend(ctx, msg, vis)
}

func (q outageQueue) PoisonQueue() engine.WorkQueue {
	if p := poisonOf(q.WorkQueue); p != nil {
		return outageQueue{WorkQueue: p, o: q.o}
	}
	return nil
}

type outagePayloads struct {
	engine.PayloadStore
	o *Outage
}

func (p outagePayloads) Put(ctx context.Context, key string, data []byte) error {
	if err := p.o.fail(OpPayloadPut); err != nil {
		return err
	}
	return p.PayloadStore.Put(ctx, key, data)
}

func (p outagePayloads) Get(ctx context.Context, key string) ([]byte, error) {
	if err := p.o.fail(OpPayloadGet); err != nil {
		return nil, err
	}
	return p.PayloadStore.Get(ctx, key)
}

func (p outagePayloads) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := p.o.fail(OpPayloadDelete); err != nil {
		return 0, err
	}
	return p.PayloadStore.DeletePrefix(ctx, prefix)
}
