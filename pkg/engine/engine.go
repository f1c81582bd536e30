package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Options configures an Engine. Zero fields take the documented defaults.
type Options struct {
	// Registry resolves graphs by name (starts) and by (name, hash) (steps). Required.
	Registry *durable.Registry
	// Store keeps run heads, history and inboxes. Required.
	Store Store
	// Queue carries work items. Required.
	Queue WorkQueue
	// Payloads keeps values too large for a table property. Required.
	Payloads PayloadStore
	// Logger receives engine logs; nil means slog.Default().
	Logger *slog.Logger
	// Clock is the time source (default time.Now). Only timeouts, back-off and timestamps
	// read it, never route decisions.
	Clock func() time.Time

	// MaxSteps bounds node visits per run (default 1000); GraphPolicy.MaxSteps overrides it
	// per graph.
	MaxSteps int
	// Policies holds per-graph guards by graph name.
	Policies map[string]GraphPolicy

	// Concurrency is the number of embedded dispatcher workers (default 4 × GOMAXPROCS).
	Concurrency int
	// VisibilityTimeout hides a received work item from other workers (default 2 min). The
	// embedded dispatcher renews it every third of its length while the item runs, so a slow
	// healthy step is never redelivered; an item comes back only when its worker died.
	VisibilityTimeout time.Duration
	// PollInterval is how often an idle dispatcher worker looks at the queue for work enqueued
	// by other processes or made visible by a delay (default 1 s). Work enqueued by this
	// engine wakes a worker at once.
	PollInterval time.Duration
	// StepBudget is how long one work item may keep running a run's steps in-process before
	// handing the run back to the queue (default VisibilityTimeout / 2). Under the Functions
	// host keep it well inside functionTimeout.
	StepBudget time.Duration
	// SweepInterval is the period of the embedded repair pass, Sweep (default 30 s; negative
	// disables it).
	SweepInterval time.Duration
	// RepairAfter is how long a start or a waking event may go without its work item being
	// confirmed on the queue before Sweep dispatches the run (default 1 min). It only delays
	// the repair of a failed enqueue; it never re-dispatches a run that is progressing.
	RepairAfter time.Duration
	// MaxDequeueCount fails the run of a work item delivered this many times without
	// completing (default 5). With the embedded dispatcher a delivery counts only when its
	// worker died (a failed handling re-enqueues the item afresh); under the Functions host
	// every failed invocation counts.
	MaxDequeueCount int64
	// Observer sees runs start, step, wait, apply events, retry, fail, complete and get
	// cancelled (default NopObserver). An Observer that is also a TraceCarrier has its trace
	// context kept with each run and carried by its work items.
	Observer Observer
	// InlineLimit is the largest property value, in UTF-16 code units, kept in a row; larger
	// values go to Payloads (default 30000, below Azure's 32768).
	InlineLimit int
}

// EngineOptions is Options.
//
// Deprecated: use Options.
type EngineOptions = Options

// DefaultVisibilityTimeout is the default Options.VisibilityTimeout.
const DefaultVisibilityTimeout = 2 * time.Minute

// GraphPolicy holds the guards of one graph beyond the original runtime.
type GraphPolicy struct {
	// MaxSteps bounds node visits per run of this graph (0: Options.MaxSteps).
	MaxSteps int
	// WaitTimeout bounds every wait_for_event of this graph (0: wait forever, as the spec).
	WaitTimeout time.Duration
	// WaitTimeoutNode is where a timed-out wait continues; empty fails the run with
	// "orchestrator failed: wait for event '<e>' timed out after <d>".
	WaitTimeoutNode string
	// Retry retries failing node handlers (default: no retry, as the original).
	Retry RetryPolicy
}

// RetryPolicy retries a node whose handler returned an error, with exponential back-off.
// State validation errors and route or event handler errors are never retried.
type RetryPolicy struct {
	// MaxAttempts counts all attempts, the first included; 0 or 1 means no retry.
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt (default 1 s).
	InitialBackoff time.Duration
	// MaxBackoff caps the delay (default 5 min).
	MaxBackoff time.Duration
	// Multiplier grows the delay per attempt (default 2).
	Multiplier float64
}

// backoff returns the delay before attempt number next (2 = first retry).
func (p RetryPolicy) backoff(next int64) time.Duration {
	d, maxD, mult := p.InitialBackoff, p.MaxBackoff, p.Multiplier
	if d <= 0 {
		d = time.Second
	}
	if maxD <= 0 {
		maxD = 5 * time.Minute
	}
	if mult < 1 {
		mult = 2
	}
	for i := int64(2); i < next && d < maxD; i++ {
		d = time.Duration(float64(d) * mult)
	}
	return min(d, maxD)
}

// Validate reports missing dependencies and out-of-range values.
func (o Options) Validate() error {
	var errs []error
	if o.Registry == nil {
		errs = append(errs, errors.New("registry is required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("store is required"))
	}
	if o.Queue == nil {
		errs = append(errs, errors.New("queue is required"))
	}
	if o.Payloads == nil {
		errs = append(errs, errors.New("payload store is required"))
	}
	if o.VisibilityTimeout < 0 || o.VisibilityTimeout > MaxDelay || o.RepairAfter < 0 {
		errs = append(errs, fmt.Errorf("visibility timeout must be within 0..%s and repair delay not negative", MaxDelay))
	}
	if o.MaxSteps < 0 || o.Concurrency < 0 || o.MaxDequeueCount < 0 || o.InlineLimit < 0 {
		errs = append(errs, errors.New("max steps, concurrency, max dequeue count and inline limit must not be negative"))
	}
	if o.InlineLimit > MaxPropertyBytes/2-2048 {
		errs = append(errs, fmt.Errorf("inline limit %d above %d", o.InlineLimit, MaxPropertyBytes/2-2048))
	}
	for name, p := range o.Policies {
		if p.MaxSteps < 0 || p.WaitTimeout < 0 || p.Retry.MaxAttempts < 0 {
			errs = append(errs, fmt.Errorf("policy of graph %q: negative value", name))
		}
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 1000
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4 * runtime.GOMAXPROCS(0)
	}
	if o.VisibilityTimeout == 0 {
		o.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if o.PollInterval == 0 {
		o.PollInterval = time.Second
	}
	if o.StepBudget == 0 {
		o.StepBudget = o.VisibilityTimeout / 2
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = 30 * time.Second
	}
	if o.RepairAfter == 0 {
		o.RepairAfter = time.Minute
	}
	if o.MaxDequeueCount == 0 {
		o.MaxDequeueCount = 5
	}
	if o.InlineLimit == 0 {
		o.InlineLimit = 30000
	}
}

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
	log      *slog.Logger
	clock    func() time.Time
	obs      observer

	id       string        // random prefix of payload keys written by this engine
	spillSeq atomic.Int64  // payload key counter
	kick     chan struct{} // wakes an idle dispatcher worker
	started  atomic.Bool   // dispatcher running: delayed enqueues schedule a wake-up
	changes  notifier

	mu     sync.Mutex
	cancel context.CancelFunc // guarded by mu; set by Start
	closed bool               // guarded by mu
	wg     sync.WaitGroup
}

var _ Runs = (*Engine)(nil)

// New validates opts and returns an engine. It starts nothing; call Start for the
// embedded dispatcher.
func New(opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	opts.setDefaults()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Engine{
		opts: opts, reg: opts.Registry, store: opts.Store, queue: opts.Queue, payloads: opts.Payloads,
		log: opts.Logger, clock: opts.Clock, id: hex.EncodeToString(b[:]), obs: newObserver(opts.Observer, opts.Logger),
		kick: make(chan struct{}, opts.Concurrency),
	}, nil
}

// NewEngine is New.
//
// Deprecated: use New.
func NewEngine(opts Options) (*Engine, error) { return New(opts) }

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
	for i := range e.opts.Concurrency {
		e.wg.Add(1)
		go e.worker(ctx, i)
	}
	if e.opts.SweepInterval > 0 {
		e.wg.Add(1)
		go e.sweepLoop(ctx)
	}
	e.log.Info("durable engine started", "concurrency", e.opts.Concurrency, "orchestrator", OrchestratorName)
	return nil
}

// Close stops the dispatcher and sweeper and waits for them. Work items in flight are left
// to the queue (redelivered after their visibility timeout). Close is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	cancel := e.cancel
	e.closed = true
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	e.wg.Wait()
	e.started.Store(false)
	return nil
}

// wake nudges one idle dispatcher worker.
func (e *Engine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// policy returns the guards of a graph.
func (e *Engine) policy(graph string) GraphPolicy { return e.opts.Policies[graph] }

func (e *Engine) maxSteps(graph string) int64 {
	if p := e.policy(graph); p.MaxSteps > 0 {
		return int64(p.MaxSteps)
	}
	return int64(e.opts.MaxSteps)
}

// spillable names the properties whose values may move to the payload store.
var spillable = [...]string{pState, pOutput, pInput, pData, pPayload}

// spills remembers the payloads one write (with its rebases) stored, so that a rebase reuses
// them and the payloads no commit refers to are deleted: a rebased, dropped or failed
// commit leaves no orphan. Only a crash between a payload write and its commit can; it lies
// under the run's prefix and goes with the run's purge or replacement.
type spills struct {
	byValue map[string]string // value → key
}

// spill moves property values above InlineLimit to the payload store, leaving "" and a
// "<name>Ref" property with the key "<run id>/<run nonce>/<engine id>-<n>.json". Keys are
// unique per value written, so a losing writer never overwrites the winner's payload.
func (e *Engine) spill(ctx context.Context, runID, nonce string, ops []Op, sp *spills) error {
	for i := range ops {
		props := ops[i].Entity.Properties
		for _, name := range spillable {
			v, ok := props[name].(string)
			if !ok || len(v) <= e.opts.InlineLimit || UTF16Len(v) <= e.opts.InlineLimit {
				continue
			}
			key, done := sp.byValue[v]
			if !done {
				key = payloadPrefix(runID, nonce) + e.id + "-" + strconv.FormatInt(e.spillSeq.Add(1), 10) + ".json"
				if err := e.payloads.Put(ctx, key, []byte(v)); err != nil {
					return fmt.Errorf("spill %s of run %s: %w", name, runID, err)
				}
				if sp.byValue == nil {
					sp.byValue = map[string]string{}
				}
				sp.byValue[v] = key
			}
			props[name] = ""
			props[name+refSuffix] = key
		}
	}
	return nil
}

// release deletes the payloads sp stored that the committed ops (nil: none) do not refer
// to. Failures are logged: the payload is then an orphan under the run's prefix.
func (e *Engine) release(ctx context.Context, sp *spills, committed []Op) {
	if len(sp.byValue) == 0 {
		return
	}
	used := map[string]bool{}
	for _, op := range committed {
		for _, name := range spillable {
			if k, ok := op.Entity.Properties[name+refSuffix].(string); ok && k != "" {
				used[k] = true
			}
		}
	}
	for _, key := range sp.byValue {
		if used[key] {
			continue
		}
		// Keys end in ".json" and never extend one another, so the prefix is the key alone.
		if _, err := e.payloads.DeletePrefix(context.WithoutCancel(ctx), key); err != nil {
			e.log.Warn("delete unused payload", "key", key, "error", err.Error())
		}
	}
	sp.byValue = nil
}

// keep forgets the payloads sp stored without deleting them: a write whose outcome is
// unknown may refer to them.
func (sp *spills) keep() { sp.byValue = nil }

// payloadPrefix is the key prefix of every payload of one run (one generation and nonce).
func payloadPrefix(runID, nonce string) string { return runID + "/" + nonce + "/" }

// newNonce returns a random run nonce (12 hex digits).
func newNonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
