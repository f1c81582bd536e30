package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Engine runs graphs of a Registry as durable, event-sourced runs on a Store, a WorkQueue
// and a PayloadStore. It implements Runs for the HTTP surface.
//
// Execution model. A run lives in one table partition (its instance id): a head row ("r")
// with the status, the pinned graph (name, version, hash), the next node, counters and the
// current state, plus append-only history rows ("h<gen>-<seq>") and inbox rows
// ("i<gen>-<seq>"). A step reads the head, runs user code, and commits one batch: the head
// merged with If-Match on the ETag it read, plus the history rows the step produced. A step
// therefore costs one table batch and never reads history; the worker holding a run's work
// item goes straight on with the next step in-process, so a steady-state node step costs
// exactly one storage operation.
//
// Fixed names. OrchestratorName (fg_orchestrator) is the queue-triggered function: every
// work item is handled by it (HandleWorkItem), and it runs the three step kinds
// ExecuteNodeName (fg_execute_node), ResolveRouteName (fg_resolve_route) and
// ApplyEventName (fg_apply_event) in-process, node and route of one visit in one commit.
// History rows and logs carry these names. There is one work queue; its message is
// {"v":1,"run_id":…,"gen":…,"step":…,"nonce":…}, raw JSON (a Functions queue backend
// base64-encodes it).
//
// Exactly-once commits, at-least-once activities. A commit that loses its If-Match means
// someone else wrote the head: if that was only a raised event, the step's result is applied
// to the new head and committed again; otherwise (another worker committed the step, the run
// was cancelled, replaced or purged) the result is discarded. A work item whose step has
// passed is dropped, unless it is a redelivery (its worker died): then it carries the run's
// current step. Handlers may therefore run more than once for the same step and must keep
// side effects idempotent: StepInfoFrom(ctx).IdempotencyKey() is
// "<run id>:<generation>.<nonce>:<step>", stable across attempts. Recovery needs no scan:
// see repair.go for the design and its cost model.
//
// Storage decides; clocks only schedule. No reader concludes from a local clock that a write
// will not land: the repair pass and the listings judge ages by the store's timestamps, and
// what they conclude from a missing row they make true with a conditional write first — the
// start's claim row inserted as a fence, or an If-Match merge on the head, which a late write
// then fails against (fence.go).
//
// Versions. A run is pinned to the graph version (name and hash) it started on; a process
// whose registry lacks that version does not fail the run but parks it (version.go) until a
// process that has it picks it up.
//
// Events go to the inbox (one batch: inbox row, event_received history row, head counters)
// and wake the run only when it waits for that name; a wait consumes the oldest inbox row
// with its name. Cancellation writes Terminated to the head at once (hard termination).
// Values above InlineLimit go to the PayloadStore and the row keeps the key.
//
// An Engine is safe for concurrent use. Start runs the embedded dispatcher and the repair
// pass (Sweep); without Start, drive it with HandleWorkItem (a queue trigger) and Sweep (a
// timer trigger).
type Engine struct {
	opts     Options
	reg      *durable.Registry
	store    Store
	queue    WorkQueue
	payloads PayloadStore
	live     LiveStore // nil: no live channel (live.go)
	log      *slog.Logger
	clock    func() time.Time
	obs      observer

	id       string        // random prefix of payload keys written by this engine
	spillSeq atomic.Int64  // payload key counter
	kick     chan struct{} // wakes an idle dispatcher worker
	started  atomic.Bool   // dispatcher running: delayed enqueues schedule a wake-up
	changes  notifier
	// liveSignals wakes the feeds that read a run's live channel when this process appends
	// to it; liveLens remembers the logs' lengths (live.go).
	liveSignals runSignals
	liveLens    liveLens
	sharedKeys  keyCache // SharedKey's keys, read once (keys.go)
	holds       holdBook // the holds this engine's handlings took (hold.go)
	// sweepBudget is how long a repair pass starts new work (sweepBudget; tests shorten it).
	sweepBudget time.Duration
	// sweepParallel is how many rows a repair pass settles at a time (sweepParallel; 1 makes
	// a seeded test's pass deterministic).
	sweepParallel int

	// receiving bounds the background handlings of ReceiveOnStart (start_receive.go): one
	// token each, Concurrency in all. bg is their context, ended by Close (stopBg).
	receiving chan struct{}
	bg        context.Context
	stopBg    context.CancelFunc

	mu     sync.Mutex
	cancel context.CancelFunc // guarded by mu; set by Start
	closed bool               // guarded by mu; no background work starts once set
	wg     sync.WaitGroup
}

var (
	_ Runs           = (*Engine)(nil)
	_ VersionCounter = (*Engine)(nil)
)

// New validates opts and returns an engine. It starts nothing; call Start for the
// embedded dispatcher.
func New(opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	opts.setDefaults()
	var b [4]byte
	_, _ = rand.Read(b[:])
	bg, stopBg := context.WithCancel(context.Background())
	return &Engine{
		opts: opts, reg: opts.Registry, store: opts.Store, queue: opts.Queue, payloads: opts.Payloads, live: opts.Live,
		log: opts.Logger, clock: opts.Clock, id: hex.EncodeToString(b[:]), obs: newObserver(opts.Observer, opts.Logger),
		kick: make(chan struct{}, opts.Concurrency), sweepBudget: sweepBudget, sweepParallel: sweepParallel,
		receiving: make(chan struct{}, opts.Concurrency), bg: bg, stopBg: stopBg,
	}, nil
}

// Options returns the engine's options with defaults applied.
func (e *Engine) Options() Options { return e.opts }

// Start runs the embedded dispatcher (Concurrency workers) and, unless SweepInterval is
// negative, the sweeper, until ctx ends or Close is called. It returns at once.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("start engine: engine is closed")
	}
	if e.cancel != nil {
		return errors.New("start engine: already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	e.started.Store(true)
	e.startDispatcher(ctx)
	if e.opts.SweepInterval > 0 {
		e.wg.Add(1)
		go e.sweepLoop(ctx)
	}
	e.log.Info("durable engine started", "concurrency", e.opts.Concurrency, "orchestrator", OrchestratorName)
	return nil
}

// Close stops the dispatcher, the sweeper and the handlings of ReceiveOnStart, and waits for
// them. Work items in flight are left to the queue (redelivered after their visibility
// timeout). Close is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	cancel := e.cancel
	e.closed = true
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	e.stopBg()
	e.wg.Wait()
	e.started.Store(false)
	return nil
}
