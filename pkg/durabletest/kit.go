package durabletest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// defaultStart is the fake clock's start when Options.Start is zero.
var defaultStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// maxItems bounds the work items one Drive handles, so a graph that loops forever fails the
// test instead of hanging it.
const maxItems = 100000

// Options configures a Kit. The zero value is valid: no policy, the clock at
// 2025-01-01T00:00:00Z, no faults, logs to slog.Default().
type Options struct {
	// Policy is the operator's policy of the graph (wait timeout, retry, max steps), as
	// engine.Options.Policies: each field set overrides the graph's own (durable.WithPolicy).
	Policy durable.GraphPolicy
	// Start is the fake clock's start (default 2025-01-01T00:00:00Z).
	Start time.Time
	// Faults makes node handlers fail transiently: node name → how many of its first
	// attempts (across all runs) fail with ErrInjected before the real handler runs. Under
	// a Policy.Retry (or the node's own durable.WithRetry) they are retried like any handler
	// error, and a node's failure route (durable.WithFailureRoute) takes them. A worker that
	// dies, a duplicate delivery or a lost reply are the Kit's methods CrashAfterHandler,
	// DuplicateDelivery, ConcurrentDelivery, LoseReply and Restart.
	Faults map[string]int
	// Logger receives the engine's logs; nil means slog.Default(). Pass
	// funchosttest.TestLogger(t) or a slog.Logger on t.Output() to tie them to the test.
	Logger *slog.Logger
	// Engine is the base of the engine's options (MaxSteps, InlineLimit, ...). Registry,
	// storage, Clock, Logger and Policies are set by the kit.
	Engine engine.Options
	// ShuffleSeed, when not zero, makes Drive hand the work items it receives together to the
	// engine in an order drawn from this seed instead of the order they were enqueued: the
	// branches of a fan-out (durable.Parallel, durable.Map) then run and finish in another
	// order, the same one for the same seed. Zero runs them in branch order.
	ShuffleSeed int64
	// Graphs are registered beside the kit's graph: the graphs its runs start child runs of
	// (durable.StartChild). Drive, Advance and Run serve their runs too; Faults and Policy
	// apply to the kit's graph only.
	Graphs []durable.Graph
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Policy.WaitTimeout < 0 || o.Policy.MaxSteps < 0 || o.Policy.Retry.MaxAttempts < 0 {
		return errNegative
	}
	for _, n := range o.Faults {
		if n < 0 {
			return errNegative
		}
	}
	return nil
}

// Kit runs one graph over the state model S on an in-memory engine with a fake clock. Its
// methods fail the test (t.Fatal) on infrastructure errors, so test code reads straight;
// TryStart and TryStartJSON return a refused start instead. A Kit is driven from the test's
// goroutine; it is not safe for concurrent use.
type Kit[S any] struct {
	t      testing.TB
	graph  durable.GraphRegistration[S]
	graphs []durable.Graph // Options.Graphs
	queue  *memory.Queue
	clock  *fakeClock
	rng    *rand.Rand // nil: items in enqueue order (Options.ShuffleSeed)

	// The storage every worker shares, and the options each worker's engine is built with.
	store    *memory.Store
	payloads engine.PayloadStore
	eo       engine.Options
	logger   *slog.Logger
	vis      time.Duration // the visibility timeout of a received work item

	faults     workerFaults // kill.go
	delivering atomic.Int32 // deliveries running now
	wmu        sync.Mutex
	w          *worker   // guarded by wmu: the live worker
	dead       []*worker // guarded by wmu: killed, not closed yet
	running    []*worker // guarded by wmu: the workers of the deliveries running now, innermost last
	faultErr   error     // guarded by wmu: the first error a worker fault met
	backAt     time.Time // when the items of a dead worker come back (zero: none)
}

// New builds a kit for g. Runs start at the graph's latest registration, as over HTTP.
func New[S any](t testing.TB, g durable.GraphRegistration[S], opts Options) *Kit[S] {
	t.Helper()
	if err := opts.Validate(); err != nil {
		t.Fatalf("durabletest: %v", err)
	}
	start := opts.Start
	if start.IsZero() {
		start = defaultStart
	}
	clock := &fakeClock{now: start}
	reg := durable.NewRegistry()
	var graph durable.Graph = g
	if len(opts.Faults) > 0 {
		graph = &faultyGraph{Graph: g, left: cloneFaults(opts.Faults)}
	}
	for _, gr := range append([]durable.Graph{graph}, opts.Graphs...) {
		if err := reg.Register(gr); err != nil {
			t.Fatalf("durabletest: register %s: %v", gr.Manifest().GraphName, err)
		}
	}
	queue := memory.NewQueue(memory.WithClock(clock.Now))
	eo := opts.Engine
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	eo.Registry, eo.Clock, eo.Logger = reg, clock.Now, logger
	store, payloads := memory.NewStore(memory.WithClock(clock.Now)), memory.NewPayloadStore()
	eo.Store, eo.Queue, eo.Payloads = store, queue, payloads
	eo.Policies = map[string]engine.GraphPolicy{g.Manifest().GraphName: opts.Policy}
	if _, err := engine.New(eo); err != nil { // checked once: each worker builds its own (kill.go)
		t.Fatalf("durabletest: %v", err)
	}
	k := &Kit[S]{t: t, graph: g, graphs: opts.Graphs, queue: queue, clock: clock,
		store: store, payloads: payloads, eo: eo, logger: logger, vis: engine.DefaultVisibilityTimeout}
	if opts.Engine.VisibilityTimeout > 0 {
		k.vis = opts.Engine.VisibilityTimeout
	}
	k.w = k.newWorker()
	if opts.ShuffleSeed != 0 {
		k.rng = rand.New(rand.NewPCG(uint64(opts.ShuffleSeed), 0x5eed))
	}
	return k
}

// Engine returns the engine, for what the kit does not wrap (ListRuns, PurgeRun, ...). Do not
// Start it: the kit drives it. A restart (Restart, CrashAfterHandler) replaces it: call
// Engine again after one.
func (k *Kit[S]) Engine() *engine.Engine { return k.current().eng }

// Now returns the fake clock's time.
func (k *Kit[S]) Now() time.Time { return k.clock.Now() }

// Start starts run id with input as its initial state and drives it until it waits or
// finishes. It returns the run's status. A start the engine refuses fails the test; TryStart
// returns it.
func (k *Kit[S]) Start(id string, input S) Run {
	k.t.Helper()
	run, err := k.TryStart(id, input)
	if err != nil {
		k.t.Fatalf("durabletest: %v", err)
	}
	return run
}

// StartJSON is Start with the initial state as JSON text (a partial object takes the model's
// defaults, as over HTTP).
func (k *Kit[S]) StartJSON(id, input string) Run {
	k.t.Helper()
	run, err := k.TryStartJSON(id, input)
	if err != nil {
		k.t.Fatalf("durabletest: %v", err)
	}
	return run
}

// TryStart is Start for a start the test expects to be refused: it returns the refusal
// instead of failing the test, and then starts nothing. The error wraps the engine's reason:
// durable.ErrInvalidState for an invalid initial state (input's Validate, or a
// *durable.StateErrors listing the fields from TryStartJSON), *RunExistsError for an
// unfinished run with that id, ErrInvalidInstanceID, ErrInvalidRunInput. An
// accepted start is driven as by Start.
func (k *Kit[S]) TryStart(id string, input S) (Run, error) {
	k.t.Helper()
	raw, err := k.graph.EncodeState(input)
	if err != nil {
		return Run{}, fmt.Errorf("start %s: %w", id, err)
	}
	return k.TryStartJSON(id, string(raw))
}

// TryStartJSON is TryStart with the initial state as JSON text, as StartJSON.
func (k *Kit[S]) TryStartJSON(id, input string) (Run, error) {
	k.t.Helper()
	if err := k.startJSON(id, input); err != nil {
		return Run{}, err
	}
	k.Drive()
	return k.Run(id), nil
}

// StartPending starts run id like Start but does not drive it: the run stays Pending until
// the next Send, Drive or Advance. An event sent now arrives before the run waits for it:
//
//	kit.StartPending("r1", S{})
//	kit.Send("r1", "approval", Approval{OK: true}) // the event before the wait
func (k *Kit[S]) StartPending(id string, input S) Run {
	k.t.Helper()
	raw, err := k.graph.EncodeState(input)
	if err != nil {
		k.t.Fatalf("durabletest: encode input of %s: %v", id, err)
	}
	if err := k.startJSON(id, string(raw)); err != nil {
		k.t.Fatalf("durabletest: %v", err)
	}
	return k.Run(id)
}

// startJSON starts run id of the kit's graph without driving it.
func (k *Kit[S]) startJSON(id, input string) error {
	_, err := k.current().eng.StartRun(context.Background(), engine.StartRunRequest{
		GraphName: k.graph.Manifest().GraphName, InstanceID: id, Input: json.RawMessage(input)})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// Send raises event on run id with payload encoded as JSON (nil sends null; a
// json.RawMessage is sent as is) and drives the run. It returns the run's status.
func (k *Kit[S]) Send(id, event string, payload any) Run {
	k.t.Helper()
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			k.t.Fatalf("durabletest: encode payload of %s: %v", event, err)
		}
	}
	if err := k.current().eng.RaiseEvent(context.Background(), id, event, raw); err != nil {
		k.t.Fatalf("durabletest: send %s to %s: %v", event, id, err)
	}
	k.Drive()
	return k.Run(id)
}

// Cancel cancels run id with reason.
func (k *Kit[S]) Cancel(id, reason string) Run {
	k.t.Helper()
	if err := k.current().eng.CancelRun(context.Background(), id, reason); err != nil {
		k.t.Fatalf("durabletest: cancel %s: %v", id, err)
	}
	k.Drive()
	return k.Run(id)
}

// Run returns run id's status.
func (k *Kit[S]) Run(id string) Run {
	k.t.Helper()
	r, err := k.current().eng.GetRun(context.Background(), id)
	if err != nil {
		k.t.Fatalf("durabletest: get %s: %v", id, err)
	}
	return r
}

// Final returns the final state of run id, failing the test unless it completed.
func (k *Kit[S]) Final(id string) S {
	k.t.Helper()
	r := k.Run(id)
	s, err := engine.DecodeState[S](r)
	if err != nil {
		k.t.Fatalf("durabletest: final state of %s: %v (output %s)", id, err, r.Output)
	}
	return s
}

// History returns every history row of run id, oldest first: those of its current generation
// for a run that continued as new (GenerationHistory reads the one before).
func (k *Kit[S]) History(id string) []HistoryEvent {
	k.t.Helper()
	var out []HistoryEvent
	token := ""
	for {
		page, err := k.current().eng.History(context.Background(), id, token, 1000)
		if err != nil {
			k.t.Fatalf("durabletest: history of %s: %v", id, err)
		}
		out = append(out, page.Events...)
		if token = page.ContinuationToken; token == "" {
			return out
		}
	}
}

// StateAfter returns run id's state after its history row seq (a row of History, or of the
// generation before it: GenerationHistory), as the row's step left it: rebuilt from the
// history from its generation's first row (engine.FoldState), since
// the rows of a graph that declares reducers record what each step changed, not the state. It
// fails the test when no row up to seq records a state, or the state does not decode into S.
func (k *Kit[S]) StateAfter(id string, seq int64) S {
	k.t.Helper()
	return k.stateAfter(id, k.rowsHolding(id, seq), seq) // generations.go
}

// stateAfter folds rows, run id's history, up to row seq (StateAfter).
func (k *Kit[S]) stateAfter(id string, rows []HistoryEvent, seq int64) S {
	k.t.Helper()
	var (
		state json.RawMessage
		s     S
	)
	for _, h := range rows {
		if h.Sequence > seq {
			break
		}
		var err error
		if state, _, err = engine.FoldState(state, h); err != nil {
			k.t.Fatalf("durabletest: state of %s after row %d: %v", id, seq, err)
		}
	}
	if state == nil {
		k.t.Fatalf("durabletest: no row of %s up to %d records a state", id, seq)
		return s
	}
	if err := json.Unmarshal(state, &s); err != nil {
		k.t.Fatalf("durabletest: state of %s after row %d: %v", id, seq, err)
	}
	return s
}

// State returns run id's current state, running or finished: the state after its last
// committed step (RunState's State), read from the run's head, whatever the length of its
// history. It fails the test for an unknown run or a state that does not decode into S.
func (k *Kit[S]) State(id string) S {
	k.t.Helper()
	st := k.RunState(id)
	var s S
	if err := json.Unmarshal(st.State, &s); err != nil {
		k.t.Fatalf("durabletest: state of %s: %v", id, err)
	}
	return s
}

// RunState returns run id's current state and where it stands (engine.Engine.RunState): the
// nodes about to run, the events it waits for, the end of its sleep, its fan-out's branches,
// the next attempt of a failed step. It fails the test for an unknown run.
func (k *Kit[S]) RunState(id string) RunState {
	k.t.Helper()
	st, err := k.current().eng.RunState(context.Background(), id)
	if err != nil {
		k.t.Fatalf("durabletest: state of %s: %v", id, err)
	}
	return st
}

// Visits returns the nodes run id completed, in history order (its node_completed rows, and
// the branch_completed rows of its fan-outs, in branch order).
func (k *Kit[S]) Visits(id string) []string {
	k.t.Helper()
	var out []string
	for _, h := range k.History(id) {
		if h.Type == engine.HistoryNodeCompleted || h.Type == engine.HistoryBranchCompleted {
			out = append(out, h.Node)
		}
	}
	return out
}

// fakeClock is the kit's time source; the engine and the queue read it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// set moves the clock to t; it never goes back.
func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}
