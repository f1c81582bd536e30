package durabletest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/commithook"
)

// The faults of workers, as against those of handlers (Options.Faults): a worker that dies
// after a handler returned, a work item delivered twice, a write whose reply is lost, an
// engine restarted. Each is armed on the kit for a node and fires at the commits of that
// node's handler returns (a step's, or a fan-out branch's: its completion, or the record of a
// failed attempt to retry), across all runs, before the commit is submitted (the engine's
// commit seam, pkg/internal/commithook). One fault fires a commit: those armed on one node
// fire in the order they were armed, CrashAfterHandler("x", 1) then LoseReply("x", 1) crashing
// the first commit of x and losing the reply of the second.

// errCrashed is the error the dead worker's commit gets in place of the storage's answer.
var errCrashed = errors.New("durabletest: the worker crashed before its commit")

// faultKind is one kind of worker fault.
type faultKind int

const (
	faultCrash faultKind = iota + 1
	faultDuplicate
	faultConcurrent
	faultLose
)

// armed is a fault armed on a node: its kind and how many more commits it fires at.
type armed struct {
	kind faultKind
	left int
}

// workerFaults holds the worker faults armed per node, in the order they were armed.
type workerFaults struct {
	mu     sync.Mutex
	byNode map[string][]armed // guarded by mu
}

// add arms n faults of kind on node, after those armed on it already.
func (f *workerFaults) add(node string, kind faultKind, n int) {
	if n == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byNode == nil {
		f.byNode = map[string][]armed{}
	}
	f.byNode[node] = append(f.byNode[node], armed{kind: kind, left: n})
}

// take returns the fault that fires at a commit of node (0: none), and counts it off: one
// fault a commit, the first armed first.
func (f *workerFaults) take(node string) faultKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.byNode[node]
	if len(q) == 0 {
		return 0
	}
	kind := q[0].kind
	if q[0].left--; q[0].left == 0 {
		f.byNode[node] = q[1:]
	}
	return kind
}

// arm checks node and times and arms times faults of kind on node.
func (k *Kit[S]) arm(what string, kind faultKind, node string, times int) {
	k.t.Helper()
	if times < 0 {
		k.t.Fatalf("durabletest: %s(%q, %d): %v", what, node, times, errNegative)
	}
	if !k.hasNode(node) {
		k.t.Fatalf("durabletest: %s(%q, %d): no graph of the kit has a node %q", what, node, times, node)
	}
	k.faults.add(node, kind, times)
}

// hasNode reports whether the kit's graph, or one of Options.Graphs, declares node.
func (k *Kit[S]) hasNode(node string) bool {
	for _, g := range append([]durable.Graph{k.graph}, k.graphs...) {
		for _, n := range g.Manifest().Nodes {
			if n.Name == node {
				return true
			}
		}
	}
	return false
}

// CrashAfterHandler kills the worker at each of the first times returns of node's handler
// (across all runs), after the return and before its commit lands: the process dies with the
// step's result in memory. Nothing it would have written afterwards lands, the engine restarts
// (Restart) and the work items the dead worker held come back after their visibility
// timeout, as from a real queue: Drive moves the fake clock on to then. The handler then runs
// again for the same step, with the same idempotency key (durable.StepInfoFrom(ctx)
// .IdempotencyKey()), and the step commits once.
//
// A step that keeps killing its worker fails its run as poison once it was started
// engine.Options.MaxStepStarts times (5) without completing.
func (k *Kit[S]) CrashAfterHandler(node string, times int) {
	k.t.Helper()
	k.arm("CrashAfterHandler", faultCrash, node, times)
}

// DuplicateDelivery delivers twice the work item of each of the first times runs of node:
// the queue hands out a second copy (as after an enqueue whose reply was lost and that the
// client retried), which arrives after the first was handled. A step's copy finds the run
// moved on and runs nothing; a fan-out branch's copy runs the branch's handler again and
// finds the branch's completion committed, so it commits nothing.
func (k *Kit[S]) DuplicateDelivery(node string, times int) {
	k.t.Helper()
	k.arm("DuplicateDelivery", faultDuplicate, node, times)
}

// ConcurrentDelivery delivers the work item of each of the first times runs of node a
// second time, to another worker (another instance of the app), while the first delivery is
// between its handler's return and its commit. Both handlers run, with the same
// idempotency key; the second delivery commits first and goes on with the run, and the
// first's commit finds the step committed and commits nothing.
func (k *Kit[S]) ConcurrentDelivery(node string, times int) {
	k.t.Helper()
	k.arm("ConcurrentDelivery", faultConcurrent, node, times)
}

// LoseReply loses the reply of the commit of each of the first times returns of node's
// handler: the storage applies the batch, and the engine's answer is that of its client's retry
// of the same batch, a conflict with the write itself (the unknown outcome). The engine must
// read back whose write landed, find its own and go on as if the write had answered.
func (k *Kit[S]) LoseReply(node string, times int) {
	k.t.Helper()
	k.arm("LoseReply", faultLose, node, times)
}

// Restart restarts the engine: the worker is killed (nothing it writes from now on lands,
// and whatever it held in memory is gone) and a new engine starts on the same storage and
// queue. Called between Drive, Send or Advance calls, it drops the engine's in-process state
// only. Called from a handler while the kit drives, it kills the worker under that handler:
// the step or branch it runs does not commit, and the work items the worker held (those
// received in the same batch: the other branches of a fan-out) come back after their
// visibility timeout, to which Drive moves the fake clock on.
func (k *Kit[S]) Restart() {
	k.t.Helper()
	k.kill(k.handling())
	if k.delivering.Load() == 0 {
		k.reap()
	}
}

// handling returns the worker whose delivery runs now, the innermost one (a ConcurrentDelivery's
// second worker runs inside the first's), else the live worker.
func (k *Kit[S]) handling() *worker {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	if n := len(k.running); n > 0 {
		return k.running[n-1]
	}
	return k.w
}

// current returns the live worker.
func (k *Kit[S]) current() *worker {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	return k.w
}

// kill kills w and, if it is the live worker, starts a new one.
func (k *Kit[S]) kill(w *worker) {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	if w.dead.Swap(true) {
		return
	}
	k.dead = append(k.dead, w)
	if k.w == w {
		k.w = k.newWorker()
	}
}

// reap closes the engines of dead workers, once no delivery runs on them.
func (k *Kit[S]) reap() {
	k.wmu.Lock()
	dead := k.dead
	k.dead = nil
	k.wmu.Unlock()
	for _, w := range dead {
		_ = w.eng.Close()
	}
}

// newWorker builds an engine over the kit's storage, gated by the new worker's life. It is
// called with wmu held or before the kit is shared.
func (k *Kit[S]) newWorker() *worker {
	w := &worker{}
	eo := k.eo
	eo.Store = workerStore{s: k.store, w: w}
	eo.Queue = newWorkerQueue(k.queue, w)
	eo.Payloads = workerPayloads{p: k.payloads, w: w}
	if eo.Live != nil {
		eo.Live = workerLive{l: eo.Live, w: w}
	}
	eo.Logger = slog.New(workerLog{h: k.logger.Handler(), w: w})
	eng, err := engine.New(eo)
	if err != nil {
		panic(fmt.Sprintf("durabletest: a new engine with options that built one: %v", err)) // checked in New
	}
	w.eng = eng
	return w
}

// deliver hands m to w's engine, with the hook that fires the worker faults at its commits.
func (k *Kit[S]) deliver(w *worker, m engine.Message) error {
	k.delivering.Add(1)
	k.wmu.Lock()
	k.running = append(k.running, w)
	k.wmu.Unlock()
	defer func() {
		k.wmu.Lock()
		k.running = k.running[:len(k.running)-1]
		k.wmu.Unlock()
		k.delivering.Add(-1)
	}()
	ctx := commithook.With(context.Background(), k.hook(w, m))
	return w.eng.HandleWorkItem(ctx, m.Body, m.DequeueCount)
}

// hook returns the commit hook of w's delivery of m.
func (k *Kit[S]) hook(w *worker, m engine.Message) commithook.Hook {
	return func(ctx context.Context, p commithook.Point) (context.Context, error) {
		switch k.faults.take(p.Node) {
		case faultConcurrent:
			// Another instance received the same item: it runs to its end while this one waits.
			peer := func() *worker { k.wmu.Lock(); defer k.wmu.Unlock(); return k.newWorker() }()
			if err := k.deliver(peer, m); err != nil && !peer.dead.Load() {
				k.noteErr(fmt.Errorf("concurrent delivery of %s step %d: %w", p.RunID, p.Step, err))
			}
			_ = peer.eng.Close()
		case faultDuplicate:
			if err := k.queue.Enqueue(context.WithoutCancel(ctx), m.Body, 0); err != nil {
				k.noteErr(fmt.Errorf("duplicate delivery of %s step %d: %w", p.RunID, p.Step, err))
			}
		case faultCrash:
			k.kill(w)
			return ctx, errCrashed
		case faultLose:
			ctx = withLostReply(ctx)
		}
		return ctx, nil
	}
}

// noteErr keeps the first error a fault met, for Drive to fail the test with.
func (k *Kit[S]) noteErr(err error) {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	if k.faultErr == nil {
		k.faultErr = err
	}
}
