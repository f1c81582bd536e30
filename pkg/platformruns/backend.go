package platformruns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// GraphName is the internal durable graph of background runs.
const GraphName = "fg_platform_run"

// Node names of the graph. A run that executed continues at the hand-off node of its result,
// handoffPrefix + the platform status (handoff_success, handoff_error, handoff_interrupted),
// which wakes the next run of its thread; the node's name carries the result, so a run in
// its hand-off reads as finished without reading its state.
const (
	nodeWaitTurn  = "wait_turn"
	nodeExecute   = "execute"
	handoffPrefix = "handoff_"
)

// eventTurn wakes a run waiting for its turn; it carries nothing: the woken run re-checks.
const eventTurn = "turn"

// Policy is the engine policy GraphName needs (engine.Options.Policies[GraphName]). Retries
// back off from 200 ms to 15 s, for about 8 hours: they are taken while the thread is busy
// with a blocking run (platform.ErrRetryLater), the backend is not bound yet, or storage
// fails a turn check or a hand-off; each retry writes one history row, so at most 2,000 per
// step (240 an hour at the longest back-off). MaxSteps allows about a week of re-checks of
// a run waiting for its turn (see the package doc).
var Policy = engine.GraphPolicy{
	MaxSteps: 10000,
	Retry:    engine.RetryPolicy{MaxAttempts: 2000, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 15 * time.Second, Multiplier: 2},
}

// Engine is what the backend needs of the durable engine; *engine.Engine implements it.
type Engine interface {
	engine.Runs
	// WaitRun polls a run until done holds.
	WaitRun(ctx context.Context, instanceID string, done func(engine.Run) bool) (engine.Run, error)
}

// errNotBound makes a node retry until Bind gave the backend its engine and executor.
var errNotBound = errors.New("platformruns: backend not bound yet")

// timeLayout is fixed-width, so created_at texts sort in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// state is the durable run's state. Turn and Ahead are the last turn check's result; Nonce is
// the durable run's nonce (durable.StepInfo), which names its payloads, the stream's included
// (streams.go).
type state struct {
	ThreadID  string `json:"thread_id"`
	RunID     string `json:"run_id"`
	CreatedAt string `json:"created_at"`
	Request   string `json:"request"`
	Status    string `json:"status"`
	Turn      bool   `json:"turn"`
	Ahead     int    `json:"ahead"`
	Nonce     string `json:"nonce"`
}

// Backend is a platform.RunBackend on the durable engine. Register it before building the
// engine, then Bind it to the engine when the platform routes are mounted.
type Backend struct {
	mu   sync.Mutex
	eng  Engine               // guarded by mu; set by Bind
	exec platform.RunExecutor // guarded by mu; set by Bind

	// recheck bounds the wait of the run next in line, recheckFar that of the runs behind
	// it: the safety net of a lost wake-up (doc.go).
	recheck, recheckFar time.Duration
}

var _ platform.RunBackend = (*Backend)(nil)

// Register adds GraphName to reg as an internal graph (durable.Registry.RegisterInternal: the
// runs API neither starts nor shows its runs, health and openapi.json do not list it, so the
// platform routes stay the only way in) and returns the backend whose nodes it runs. Give the
// engine built on reg the Policy for GraphName.
func Register(reg *durable.Registry) (*Backend, error) {
	b := &Backend{recheck: time.Minute, recheckFar: 10 * time.Minute}
	mb := durable.NewManifestBuilder[state](GraphName, durable.WithVersion("2"))
	mb.SetEntrypoint(nodeWaitTurn)
	err := errors.Join(
		mb.AddNode(nodeWaitTurn, b.waitTurn, durable.WithRoute(b.afterTurnCheck),
			durable.WithHandlerName("platformruns.wait_turn"), durable.WithRouteName("platformruns.after_turn_check")),
		mb.AddEventHandler(eventTurn, func(context.Context, state, json.RawMessage) (any, error) { return nil, nil }),
		mb.AddNode(nodeExecute, b.execute, durable.WithRoute(afterExecute),
			durable.WithHandlerName("platformruns.execute"), durable.WithRouteName("platformruns.after_execute")),
	)
	for _, st := range []platform.RunStatus{platform.RunSuccess, platform.RunError, platform.RunInterrupted} {
		err = errors.Join(err, mb.AddNode(handoffPrefix+string(st), b.handOff, durable.Terminal(), durable.WithHandlerName("platformruns.hand_off")))
	}
	if err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	g, err := mb.Build()
	if err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	if err := reg.RegisterInternal(g); err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	return b, nil
}

// Bind returns the platform.Options.NewRunBackend function that binds the backend to eng and
// the platform's executor. The engine must run GraphName with Policy.
func (b *Backend) Bind(eng Engine) func(platform.RunExecutor) (platform.RunBackend, error) {
	return func(exec platform.RunExecutor) (platform.RunBackend, error) {
		if eo, ok := eng.(interface{ Options() engine.Options }); ok {
			if eo.Options().Policies[GraphName].Retry.MaxAttempts < 2 {
				return nil, fmt.Errorf("bind platform runs: the engine has no retry policy for %s (set engine.Options.Policies[%q] = platformruns.Policy)", GraphName, GraphName)
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		b.eng, b.exec = eng, exec
		return b, nil
	}
}

func (b *Backend) bound() (Engine, platform.RunExecutor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eng, b.exec
}

// execute runs the graph through the executor, interrupting it when the durable run is
// terminated.
func (b *Backend) execute(ctx context.Context, s state) (any, error) {
	eng, exec := b.bound()
	if eng == nil {
		return nil, errNotBound
	}
	run, err := s.platformRun()
	if err != nil {
		return durable.Update{"status": string(platform.RunError)}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		r, err := eng.WaitRun(ctx, s.RunID, func(r engine.Run) bool { return r.RuntimeStatus == engine.StatusTerminated })
		if err == nil && r.RuntimeStatus == engine.StatusTerminated {
			cancel()
		}
	}()
	run.Status = platform.RunRunning
	status, err := exec.ExecuteRun(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("execute run %s: %w", s.RunID, err)
	}
	return durable.Update{"status": string(status)}, nil
}

func (s state) platformRun() (platform.Run, error) {
	var req platform.RunRequest
	if err := json.Unmarshal([]byte(s.Request), &req); err != nil {
		return platform.Run{}, fmt.Errorf("decode run %s: %w", s.RunID, err)
	}
	at, _ := time.Parse(timeLayout, s.CreatedAt)
	return platform.Run{RunID: s.RunID, ThreadID: s.ThreadID, CreatedAt: at, UpdatedAt: at, Status: platform.RunPending, Request: req}, nil
}

func decodeState(r engine.Run) (state, bool) {
	var s state
	return s, r.GraphName == GraphName && json.Unmarshal(r.Input.InitialState, &s) == nil && s.RunID != ""
}

// toPlatform maps a durable run to the platform's view of it.
func toPlatform(r engine.Run) (platform.Run, bool) {
	s, ok := decodeState(r)
	if !ok {
		return platform.Run{}, false
	}
	run, err := s.platformRun()
	if err != nil {
		return platform.Run{}, false
	}
	run.UpdatedAt = r.UpdatedAt.UTC()
	switch r.RuntimeStatus {
	case engine.StatusPending:
		run.Status = platform.RunPending
	case engine.StatusRunning:
		node := currentNode(r)
		run.Status = platform.RunPending
		if node == nodeExecute {
			run.Status = platform.RunRunning
		} else if st := platform.RunStatus(strings.TrimPrefix(node, handoffPrefix)); node != string(st) && st.Terminal() {
			run.Status = st // executed: the hand-off node names the result
		}
	case engine.StatusCompleted:
		var out struct {
			State state `json:"state"`
		}
		run.Status = platform.RunError
		if json.Unmarshal(r.Output, &out) == nil && platform.RunStatus(out.State.Status).Terminal() {
			run.Status = platform.RunStatus(out.State.Status)
		}
	case engine.StatusTerminated:
		run.Status = platform.RunInterrupted
	default:
		run.Status = platform.RunError
	}
	return run, true
}

func (b *Backend) engine() (Engine, error) {
	eng, _ := b.bound()
	if eng == nil {
		return nil, errNotBound
	}
	return eng, nil
}

// Submit implements platform.RunBackend: it starts the durable run.
func (b *Backend) Submit(ctx context.Context, run platform.Run) error {
	eng, err := b.engine()
	if err != nil {
		return err
	}
	req, err := json.Marshal(run.Request)
	if err != nil {
		return fmt.Errorf("submit run %s: %w", run.RunID, err)
	}
	s := state{ThreadID: run.ThreadID, RunID: run.RunID, CreatedAt: run.CreatedAt.UTC().Format(timeLayout), Request: string(req)}
	in, _ := json.Marshal(s)
	md, _ := json.Marshal(map[string]string{"thread_id": run.ThreadID})
	start := engine.StartRunRequest{GraphName: GraphName, InstanceID: run.RunID, Input: in, Metadata: md, Group: queueGroup(run.ThreadID)}
	if _, err := eng.StartRun(ctx, start); err != nil {
		return fmt.Errorf("submit run %s: %w", run.RunID, err)
	}
	return nil
}

// Get implements platform.RunBackend.
func (b *Backend) Get(ctx context.Context, threadID, runID string) (platform.Run, error) {
	eng, err := b.engine()
	if err != nil {
		return platform.Run{}, err
	}
	r, err := eng.GetRun(ctx, runID)
	if errors.Is(err, engine.ErrRunNotFound) || errors.Is(err, engine.ErrInvalidInstanceID) {
		return platform.Run{}, fmt.Errorf("run %q of thread %q: %w", runID, threadID, platform.ErrRunNotFound)
	} else if err != nil {
		return platform.Run{}, fmt.Errorf("get run %s: %w", runID, err)
	}
	run, ok := toPlatform(r)
	if !ok || run.ThreadID != threadID {
		return platform.Run{}, fmt.Errorf("run %q of thread %q: %w", runID, threadID, platform.ErrRunNotFound)
	}
	return run, nil
}

// List implements platform.RunBackend: it reads the thread's runs newest first from the
// engine's group index, up to offset+limit of them (more with a status filter, which skips
// runs), whatever the number of runs other threads keep.
func (b *Backend) List(ctx context.Context, threadID string, status platform.RunStatus, limit, offset int) ([]platform.Run, error) {
	eng, err := b.engine()
	if err != nil {
		return nil, err
	}
	out := []platform.Run{}
	q := engine.RunQuery{GraphName: GraphName, Group: queueGroup(threadID), Limit: engine.MaxPageSize}
	if limit > 0 && status == "" {
		q.Limit = min(max(offset, 0)+limit, engine.MaxPageSize)
	}
	for {
		page, err := eng.ListRuns(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list runs of thread %s: %w", threadID, err)
		}
		for _, r := range page.Runs {
			run, ok := toPlatform(r)
			if !ok || run.ThreadID != threadID || status != "" && run.Status != status {
				continue
			}
			if offset > 0 {
				offset--
				continue
			}
			out = append(out, run)
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
		if page.ContinuationToken == "" {
			return out, nil
		}
		q.ContinuationToken = page.ContinuationToken
	}
}

// Join implements platform.RunBackend. It returns once the run has executed: a run in its
// hand-off node has its final status.
func (b *Backend) Join(ctx context.Context, threadID, runID string) (platform.Run, error) {
	eng, err := b.engine()
	if err != nil {
		return platform.Run{}, err
	}
	if _, err := b.Get(ctx, threadID, runID); err != nil {
		return platform.Run{}, err
	}
	r, err := eng.WaitRun(ctx, runID, handedOff)
	if err != nil {
		return platform.Run{}, fmt.Errorf("join run %s: %w", runID, err)
	}
	run, _ := toPlatform(r)
	return run, nil
}

// Cancel implements platform.RunBackend: it terminates the durable run, then wakes the next
// run of the thread (best effort: its safety net re-checks otherwise, doc.go); a running
// graph is interrupted by its execute node within about 100 ms.
func (b *Backend) Cancel(ctx context.Context, threadID, runID string, wait bool) error {
	eng, err := b.engine()
	if err != nil {
		return err
	}
	run, err := b.Get(ctx, threadID, runID)
	if err != nil {
		return err
	}
	if run.Status.Terminal() {
		return fmt.Errorf("cancel run %q: %w", runID, platform.ErrRunFinished)
	}
	err = eng.CancelRun(ctx, runID, "cancelled")
	var fin *engine.RunFinishedError
	if errors.As(err, &fin) {
		return fmt.Errorf("cancel run %q: %w", runID, platform.ErrRunFinished)
	} else if err != nil {
		return fmt.Errorf("cancel run %q: %w", runID, err)
	}
	if err := wakeNext(ctx, eng, threadID, runID); err != nil {
		slog.WarnContext(ctx, "platformruns: wake the next run after a cancel; its re-check takes over", "run_id", runID, "error", err.Error())
	}
	if wait {
		_, err := b.Join(ctx, threadID, runID)
		return err
	}
	return nil
}

// Active implements platform.RunBackend: whether the thread's queue holds a run that has not
// executed. Cost: one query and a head read or two.
func (b *Backend) Active(ctx context.Context, threadID string) (bool, error) {
	eng, err := b.engine()
	if err != nil {
		return false, err
	}
	active := false
	err = scanQueue(ctx, eng, threadID, 2, func(r engine.Run, _ state) bool {
		active = !handedOff(r)
		return !active
	})
	return active, err
}
