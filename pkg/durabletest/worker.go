package durabletest

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A worker is one incarnation of the engine over the kit's storage: what one process of the
// app is. A crash or a restart (CrashAfterHandler, Restart) kills it: from then on none of its
// storage calls reaches the storage (each fails with errWorkerDead, as a dead process's never
// land), its logs go nowhere, and a new worker takes over on the same storage, knowing
// nothing of what the dead one held in memory. The work items the dead worker had received
// come back after their visibility timeout, as from a real queue.
type worker struct {
	eng  *engine.Engine
	dead atomic.Bool
}

// errWorkerDead is what every storage call of a dead worker returns.
var errWorkerDead = errors.New("durabletest: the worker is dead")

// gate returns errWorkerDead once w is dead.
func (w *worker) gate() error {
	if w.dead.Load() {
		return errWorkerDead
	}
	return nil
}

// workerStore is the kit's store as one worker sees it: gated by the worker's life, and
// losing the reply of a batch whose context asks for it (LoseReply).
type workerStore struct {
	s *memory.Store
	w *worker
}

var (
	_ engine.Store       = workerStore{}
	_ engine.RowReader   = workerStore{}
	_ engine.RunAccounts = workerStore{}
)

func (s workerStore) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	if err := s.w.gate(); err != nil {
		return engine.Entity{}, err
	}
	return s.s.Get(ctx, pk, rk)
}

func (s workerStore) GetRow(ctx context.Context, pk, rk string, visit func(string, any)) (string, time.Time, error) {
	if err := s.w.gate(); err != nil {
		return "", time.Time{}, err
	}
	return s.s.GetRow(ctx, pk, rk, visit)
}

func (s workerStore) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	if err := s.w.gate(); err != nil {
		return engine.Page{}, err
	}
	return s.s.Query(ctx, q)
}

// Submit applies ops; when ctx carries an armed lost reply, the reply of the applied batch is
// lost and the answer is that of the client's retry of the same batch, as the Azure SDK's:
// a conflict with the write itself for an insert or an If-Match.
func (s workerStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	if err := s.w.gate(); err != nil {
		return nil, err
	}
	etags, err := s.s.Submit(ctx, ops)
	if err == nil && takeLostReply(ctx) {
		return s.s.Submit(ctx, ops)
	}
	return etags, err
}

func (s workerStore) AccountsRuns() bool           { return s.s.AccountsRuns() }
func (s workerStore) RunOwner(runID string) string { return s.s.RunOwner(runID) }
func (s workerStore) Crowded(owner string) bool    { return s.s.Crowded(owner) }

// workerQueue is the kit's work queue as one worker sees it.
type workerQueue struct {
	q      engine.WorkQueue
	poison engine.WorkQueue // nil: none
	w      *worker
}

var _ engine.PoisonQueuer = workerQueue{}

// PoisonQueue returns the poison queue, gated too (nil: none).
func (q workerQueue) PoisonQueue() engine.WorkQueue { return q.poison }

// newWorkerQueue gates q, and its poison queue, by w's life.
func newWorkerQueue(q engine.WorkQueue, w *worker) workerQueue {
	wq := workerQueue{q: q, w: w}
	if p, ok := q.(engine.PoisonQueuer); ok && p.PoisonQueue() != nil {
		wq.poison = workerQueue{q: p.PoisonQueue(), w: w}
	}
	return wq
}

func (q workerQueue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	if err := q.w.gate(); err != nil {
		return err
	}
	return q.q.Enqueue(ctx, body, delay)
}

func (q workerQueue) Receive(ctx context.Context, max int, vis time.Duration) ([]engine.Message, error) {
	if err := q.w.gate(); err != nil {
		return nil, err
	}
	return q.q.Receive(ctx, max, vis)
}

func (q workerQueue) Delete(ctx context.Context, msg engine.Message) error {
	if err := q.w.gate(); err != nil {
		return err
	}
	return q.q.Delete(ctx, msg)
}

func (q workerQueue) Extend(ctx context.Context, msg engine.Message, vis time.Duration) (engine.Message, error) {
	if err := q.w.gate(); err != nil {
		return engine.Message{}, err
	}
	return q.q.Extend(ctx, msg, vis)
}

// workerPayloads is the kit's payload store as one worker sees it.
type workerPayloads struct {
	p engine.PayloadStore
	w *worker
}

func (p workerPayloads) gate() error { return p.w.gate() }

func (p workerPayloads) Put(ctx context.Context, key string, data []byte) error {
	if err := p.gate(); err != nil {
		return err
	}
	return p.p.Put(ctx, key, data)
}

func (p workerPayloads) Get(ctx context.Context, key string) ([]byte, error) {
	if err := p.gate(); err != nil {
		return nil, err
	}
	return p.p.Get(ctx, key)
}

func (p workerPayloads) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := p.gate(); err != nil {
		return 0, err
	}
	return p.p.DeletePrefix(ctx, prefix)
}

// workerLive is the live store (Options.Engine.Live) as one worker sees it.
type workerLive struct {
	l engine.LiveStore
	w *worker
}

func (l workerLive) gate() error { return l.w.gate() }

func (l workerLive) Append(ctx context.Context, key string, at int64, data []byte) (int64, error) {
	if err := l.gate(); err != nil {
		return 0, err
	}
	return l.l.Append(ctx, key, at, data)
}

func (l workerLive) Read(ctx context.Context, key string, from int64, max int) ([]byte, int64, error) {
	if err := l.gate(); err != nil {
		return nil, 0, err
	}
	return l.l.Read(ctx, key, from, max)
}

func (l workerLive) Length(ctx context.Context, key string) (int64, error) {
	if err := l.gate(); err != nil {
		return 0, err
	}
	return l.l.Length(ctx, key)
}

func (l workerLive) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := l.gate(); err != nil {
		return 0, err
	}
	return l.l.DeletePrefix(ctx, prefix)
}

// workerLog drops the records of a dead worker: a dead process logs nothing.
type workerLog struct {
	h slog.Handler
	w *worker
}

func (h workerLog) Enabled(ctx context.Context, l slog.Level) bool {
	return !h.w.dead.Load() && h.h.Enabled(ctx, l)
}

func (h workerLog) Handle(ctx context.Context, r slog.Record) error {
	if h.w.dead.Load() {
		return nil
	}
	return h.h.Handle(ctx, r)
}

func (h workerLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return workerLog{h.h.WithAttrs(attrs), h.w}
}

func (h workerLog) WithGroup(name string) slog.Handler { return workerLog{h.h.WithGroup(name), h.w} }

// lostReply, in a batch's context, asks the worker's store to lose the batch's reply, once.
type lostReply struct{ armed atomic.Bool }

type lostReplyKey struct{}

// withLostReply returns ctx asking for the reply of the next batch submitted with it to be lost.
func withLostReply(ctx context.Context) context.Context {
	lr := &lostReply{}
	lr.armed.Store(true)
	return context.WithValue(ctx, lostReplyKey{}, lr)
}

// takeLostReply reports whether ctx asks for a lost reply, and disarms it.
func takeLostReply(ctx context.Context) bool {
	lr, _ := ctx.Value(lostReplyKey{}).(*lostReply)
	return lr != nil && lr.armed.CompareAndSwap(true, false)
}
