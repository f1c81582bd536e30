package enginetest

import (
	"context"
	"errors"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// ErrInjected is the error the fault wrappers return for an injected failure.
var ErrInjected = errors.New("enginetest: injected fault")

// FaultStore is an engine.Store whose Submit can fail before or after it reaches the
// wrapped store, to simulate a crash before a commit (nothing written) or after it (written,
// but the caller never learns), or lose its reply as the Azure SDK sees it. Nil hooks inject
// nothing. Hooks are called concurrently.
type FaultStore struct {
	engine.Store
	// BeforeSubmit, if it returns an error, fails the Submit without writing.
	BeforeSubmit func(ops []engine.Op) error
	// AfterSubmit, if it returns an error, fails a Submit that did write: an unknown outcome
	// (a lost reply whose retries failed, a timeout, a 500).
	AfterSubmit func(ops []engine.Op) error
	// LoseReply, if it returns true for a batch the store applied, loses the reply the way
	// the Azure table store reports it: the SDK retries the same batch, and the retry's
	// answer is returned — ErrConflict for an insert or If-Match the first try made fail,
	// ErrNotFound for a delete it made fail, success for a batch whose repetition is
	// harmless. It is asked after BeforeSubmit and before AfterSubmit.
	LoseReply func(ops []engine.Op) bool
	// BeforeGet, if it returns an error, fails the Get.
	BeforeGet func(partitionKey, rowKey string) error
	// BeforeQuery, if it returns an error, fails the Query; it also lets a test see every
	// query the engine makes.
	BeforeQuery func(q engine.Query) error
}

// Get runs the hook before the wrapped Get.
func (s FaultStore) Get(ctx context.Context, partitionKey, rowKey string) (engine.Entity, error) {
	if s.BeforeGet != nil {
		if err := s.BeforeGet(partitionKey, rowKey); err != nil {
			return engine.Entity{}, err
		}
	}
	return s.Store.Get(ctx, partitionKey, rowKey)
}

// Query runs the hook before the wrapped Query.
func (s FaultStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	if s.BeforeQuery != nil {
		if err := s.BeforeQuery(q); err != nil {
			return engine.Page{}, err
		}
	}
	return s.Store.Query(ctx, q)
}

// Submit runs the hooks around the wrapped Submit.
func (s FaultStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	if s.BeforeSubmit != nil {
		if err := s.BeforeSubmit(ops); err != nil {
			return nil, err
		}
	}
	etags, err := s.Store.Submit(ctx, ops)
	if err == nil && s.LoseReply != nil && s.LoseReply(ops) {
		etags, err = s.Store.Submit(ctx, ops) // the SDK's retry of the same request
	}
	if err == nil && s.AfterSubmit != nil {
		if err := s.AfterSubmit(ops); err != nil {
			return nil, err
		}
	}
	return etags, err
}

// FaultQueue is an engine.WorkQueue whose Enqueue can be dropped, duplicated or fail after
// it queued, and whose Delete can lose its reply.
type FaultQueue struct {
	engine.WorkQueue
	// OnEnqueue decides per message: return an error to fail the enqueue (nothing queued), or
	// a count of copies to queue (1 normally, 2 to duplicate — a lost reply the SDK retried
	// —, 0 to drop silently).
	OnEnqueue func(body []byte) (copies int, err error)
	// AfterEnqueue, if it returns an error, fails an Enqueue that queued its copies: an
	// unknown outcome.
	AfterEnqueue func(body []byte) error
	// LoseDelete, if it returns true, loses the reply of a Delete that removed the message:
	// the SDK's retry then finds it gone, and Delete returns ErrNotFound.
	LoseDelete func(msg engine.Message) bool
}

// Delete applies LoseDelete.
func (q FaultQueue) Delete(ctx context.Context, msg engine.Message) error {
	if err := q.WorkQueue.Delete(ctx, msg); err != nil {
		return err
	}
	if q.LoseDelete != nil && q.LoseDelete(msg) {
		return q.WorkQueue.Delete(ctx, msg) // the SDK's retry: the message is gone
	}
	return nil
}

// PoisonQueue forwards to the wrapped queue's poison queue (engine.PoisonQueuer), without
// faults; nil when it has none.
func (q FaultQueue) PoisonQueue() engine.WorkQueue { return poisonOf(q.WorkQueue) }

// poisonOf returns q's poison queue, or nil.
func poisonOf(q engine.WorkQueue) engine.WorkQueue {
	if p, ok := q.(engine.PoisonQueuer); ok {
		return p.PoisonQueue()
	}
	return nil
}

// Enqueue applies OnEnqueue.
func (q FaultQueue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	copies := 1
	if q.OnEnqueue != nil {
		var err error
		if copies, err = q.OnEnqueue(body); err != nil {
			return err
		}
	}
	for range copies {
		if err := q.WorkQueue.Enqueue(ctx, body, delay); err != nil {
			return err
		}
	}
	if q.AfterEnqueue != nil {
		return q.AfterEnqueue(body)
	}
	return nil
}
