package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
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
	// Live keeps the runs' live channels: what steps write while they run (durable.Write),
	// readable by a run's feed before the step commits (live.go). Nil: no live channel, and
	// durable.Write does nothing.
	Live LiveStore
	// LiveFlushInterval is the least time between two appends of one step to its run's live
	// channel (default DefaultLiveFlushInterval): a step's first chunk goes at once, later
	// ones are coalesced.
	LiveFlushInterval time.Duration
	// LivePollInterval is how often a feed waiting on a run's live channel asks its length,
	// to see another instance's appends (default DefaultLivePollInterval).
	LivePollInterval time.Duration
	// Logger receives engine logs; nil means slog.Default().
	Logger *slog.Logger
	// Clock is the time source (default time.Now). Only timeouts, back-off and timestamps
	// read it, never route decisions.
	Clock func() time.Time

	// MaxSteps bounds node visits per run (default 1000), a fan-out's branches included (a
	// fan-out that would pass it is refused before it commits); GraphPolicy.MaxSteps overrides
	// it per graph.
	MaxSteps int
	// Policies holds the operator's per-graph guards by graph name: each field set overrides
	// the graph's own (durable.WithPolicy) for every version of the graph.
	Policies map[string]GraphPolicy

	// Concurrency is the number of embedded dispatcher workers (default 4 × GOMAXPROCS); one
	// receiver fetches work for them in batches of up to MaxReceive. It also bounds the
	// handlings of ReceiveOnStart running at a time.
	Concurrency int
	// VisibilityTimeout hides a received work item from other workers (default 2 min). The
	// embedded dispatcher renews it every third of its length while the item runs, so a slow
	// healthy step is never redelivered; an item comes back only when its worker died.
	VisibilityTimeout time.Duration
	// PollInterval is how often an idle dispatcher looks at the queue for work enqueued by
	// other processes or made visible by a delay (default 1 s): its one receiver backs off
	// from PollInterval/32 to PollInterval after a receive that found the queue drained,
	// however many workers wait. Work enqueued by this engine wakes it at once.
	PollInterval time.Duration
	// FeedPollInterval is how often a feed waiting for a run's progress reads the run's head,
	// to see the steps other processes commit (default DefaultFeedPollInterval; this
	// engine's own commits wake it at once). Each waiting feed costs one read per interval.
	FeedPollInterval time.Duration
	// ReceiveOnStart has a start take one work item off the queue itself once its first item
	// is there, and handle it in the background as a delivery of the queue (start_receive.go):
	// for an engine without the embedded dispatcher, whose work items a host's queue trigger
	// delivers after its polling back-off (up to maxPollingInterval on an idle app). The item
	// received is handled exactly as the dispatcher's worker handles one — hidden, renewed,
	// deleted once done — so a handling that dies leaves it to come back. At most Concurrency
	// such handlings run at a time; a start past that leaves its item to the queue. Ignored while
	// the embedded dispatcher runs (Start): a start's enqueue already wakes its receiver.
	ReceiveOnStart bool
	// StepBudget is how long one work item may keep running a run's steps in-process before
	// handing the run back to the queue (default VisibilityTimeout / 2). Under the Functions
	// host keep it well inside functionTimeout.
	StepBudget time.Duration
	// SweepInterval is the period of the embedded repair pass, Sweep (default 30 s; negative
	// disables it).
	SweepInterval time.Duration
	// RepairAfter is how long a start or a waking event may go without its work item being
	// confirmed on the queue before Sweep dispatches the run (default 1 min), judged by the
	// store's timestamps; a start or event whose write has not landed by then is fenced off
	// (fence.go), never assumed lost. It only delays repairs; it never re-dispatches a run
	// that is progressing.
	RepairAfter time.Duration
	// MaxDequeueCount is the embedded dispatcher's delivery budget (default 5): a message
	// received more often than this goes to the queue's poison queue (PoisonQueuer), as the
	// Functions host moves it to "<queue>-poison" after host.json's maxDequeueCount, and the
	// repair pass puts it back when its run still needs it. A failed handling re-enqueues its
	// item as a fresh copy, so only deaths and failures while the queue itself is down use it.
	// It never fails a run: MaxStepStarts does.
	MaxDequeueCount int64
	// MaxStepStarts fails a run whose current step was started this many times without
	// completing — its worker died, was killed or timed out each time (default 5). Storage
	// errors and shutdowns never count: a start counts as a death only when a later start
	// finds its hold unreleased past StepLease (the kill limit, workitem.go). Under the
	// Functions host it is independent of maxDequeueCount.
	MaxStepStarts int64
	// StepLease is how long a start of a step may hold it: a later start that finds the hold
	// neither committed nor released past it counts the holder as dead (default
	// VisibilityTimeout / 2: the embedded dispatcher redelivers a dead worker's item only
	// after its visibility timeout). Under the Functions host set it to functionTimeout, past
	// which the host kills a handling (launch does).
	StepLease time.Duration
	// Observer sees runs start, step, wait, apply events, retry, fail, complete and get
	// cancelled (default NopObserver). An Observer that is also a TraceCarrier has its trace
	// context kept with each run and carried by its work items.
	Observer Observer
	// InlineLimit is the largest property value, in UTF-16 code units, kept in a row; larger
	// values go to Payloads (default 30000, below Azure's 32768).
	InlineLimit int
	// Retention bounds the finished runs kept; Sweep purges the rest (retention.go). The
	// zero value keeps every run.
	Retention Retention

	// MaxChildDepth bounds how deep child runs nest (default DefaultMaxChildDepth): a run
	// started directly is at depth 0, its child at 1, and a step whose child would be deeper
	// than this fails instead (taking its node's failure route, if any). It ends a graph that
	// starts itself as a child, and bounds the chain a cancel walks.
	MaxChildDepth int
	// MaxFamilyRuns bounds the runs of one family (default DefaultMaxFamilyRuns): a run
	// started directly and every run started below it, counted as they start; a step whose
	// child would pass it fails instead (taking its node's failure route, if any). It bounds
	// what a family's purge deletes. What is counted, and how, is in child.go.
	MaxFamilyRuns int
}

// Defaults of the bounds of a family of child runs (Options.MaxChildDepth, MaxFamilyRuns).
// Eight levels is more nesting than any agent graph we know of needs (a supervisor, its
// agents, their tools: three), and keeps a runaway recursion to nine runs. A thousand runs
// lets a run spend its whole default MaxSteps (1 000 visits) on starting children, and bounds
// a family's purge to a thousand runs' rows.
const (
	DefaultMaxChildDepth = 8
	DefaultMaxFamilyRuns = 1000
)

// DefaultVisibilityTimeout is the default Options.VisibilityTimeout.
const DefaultVisibilityTimeout = 2 * time.Minute

// GraphPolicy holds the guards of one graph: it is durable.GraphPolicy, which a graph
// declares with durable.WithPolicy; Options.Policies overrides it (policyOf).
type GraphPolicy = durable.GraphPolicy

// policyOf returns the guards of a run of g: g's own (durable.WithPolicy), each field
// overridden by the operator's (Options.Policies[name]) when that field is set there (not
// zero). A nil g, or a Graph with no Policy method, runs under the operator's alone.
func policyOf(g durable.Graph, operator GraphPolicy) GraphPolicy {
	own, ok := g.(interface{ Policy() GraphPolicy })
	if !ok {
		return operator
	}
	p := own.Policy()
	if operator.MaxSteps != 0 {
		p.MaxSteps = operator.MaxSteps
	}
	if operator.WaitTimeout != 0 {
		p.WaitTimeout = operator.WaitTimeout
	}
	if operator.WaitTimeoutNode != "" {
		p.WaitTimeoutNode = operator.WaitTimeoutNode
	}
	if operator.Retry != (RetryPolicy{}) {
		p.Retry = operator.Retry
	}
	return p
}

// RetryPolicy retries a node whose handler failed, with exponential back-off: it is
// durable.RetryPolicy, so that a graph's policy (GraphPolicy.Retry) and a node's own
// (durable.WithRetry, which replaces the graph's for that node) are one type. Errors marked
// durable.NonRetryable, state validation errors and route or event handler errors are never
// retried.
type RetryPolicy = durable.RetryPolicy

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
	if o.StepLease < 0 {
		errs = append(errs, errors.New("step lease must not be negative"))
	}
	if o.MaxSteps < 0 || o.Concurrency < 0 || o.MaxDequeueCount < 0 || o.MaxStepStarts < 0 || o.InlineLimit < 0 {
		errs = append(errs, errors.New("max steps, concurrency, max dequeue count, max step starts and inline limit must not be negative"))
	}
	if o.MaxChildDepth < 0 || o.MaxFamilyRuns < 0 {
		errs = append(errs, errors.New("max child depth and max family runs must not be negative"))
	}
	if o.FeedPollInterval < 0 {
		errs = append(errs, errors.New("feed poll interval must not be negative"))
	}
	if o.LiveFlushInterval < 0 || o.LivePollInterval < 0 {
		errs = append(errs, errors.New("live flush and live poll intervals must not be negative"))
	}
	if o.InlineLimit > maxPropertyBytes/2-2048 {
		errs = append(errs, fmt.Errorf("inline limit %d above %d", o.InlineLimit, maxPropertyBytes/2-2048))
	}
	for name, p := range o.Policies {
		if p.MaxSteps < 0 || p.WaitTimeout < 0 || p.Retry.MaxAttempts < 0 {
			errs = append(errs, fmt.Errorf("policy of graph %q: negative value", name))
		}
	}
	if err := o.Retention.validate(); err != nil {
		errs = append(errs, err)
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
	if o.LiveFlushInterval == 0 {
		o.LiveFlushInterval = DefaultLiveFlushInterval
	}
	if o.LivePollInterval == 0 {
		o.LivePollInterval = DefaultLivePollInterval
	}
	if o.FeedPollInterval == 0 {
		o.FeedPollInterval = DefaultFeedPollInterval
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
	if o.MaxStepStarts == 0 {
		o.MaxStepStarts = 5
	}
	if o.StepLease == 0 {
		o.StepLease = o.VisibilityTimeout / 2
	}
	if o.InlineLimit == 0 {
		o.InlineLimit = 30000
	}
	if o.MaxChildDepth == 0 {
		o.MaxChildDepth = DefaultMaxChildDepth
	}
	if o.MaxFamilyRuns == 0 {
		o.MaxFamilyRuns = DefaultMaxFamilyRuns
	}
}
