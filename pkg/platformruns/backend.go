package platformruns

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// GraphName is the internal durable graph of background runs.
const GraphName = "fg_platform_run"

// Node names of the graph.
const (
	nodeWaitTurn = "wait_turn"
	nodeExecute  = "execute"
)

// Policy is the engine policy GraphName needs (engine.Options.Policies[GraphName]): retries
// with back-off from 100 ms to 2 s while a run waits for its turn or its thread, for about
// 5 hours.
var Policy = engine.GraphPolicy{
	MaxSteps: 10,
	Retry:    engine.RetryPolicy{MaxAttempts: 10000, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Multiplier: 2},
}

// Engine is what the backend needs of the durable engine; *engine.Engine implements it.
type Engine interface {
	engine.Runs
	// WaitRun polls a run until done holds.
	WaitRun(ctx context.Context, instanceID string, done func(engine.Run) bool) (engine.Run, error)
}

// errNotYourTurn makes wait_turn retry.
var errNotYourTurn = errors.New("platformruns: an earlier run of the thread is unfinished")

// errNotBound makes a node retry until Bind gave the backend its engine and executor.
var errNotBound = errors.New("platformruns: backend not bound yet")

// timeLayout is fixed-width, so created_at texts sort in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// state is the durable run's state.
type state struct {
	ThreadID  string `json:"thread_id"`
	RunID     string `json:"run_id"`
	CreatedAt string `json:"created_at"`
	Request   string `json:"request"`
	Status    string `json:"status"`
}

// Backend is a platform.RunBackend on the durable engine. Register it before building the
// engine, then Bind it to the engine when the platform routes are mounted.
type Backend struct {
	mu   sync.Mutex
	eng  Engine               // guarded by mu; set by Bind
	exec platform.RunExecutor // guarded by mu; set by Bind
}

var _ platform.RunBackend = (*Backend)(nil)

// Register adds GraphName to reg and returns the backend whose nodes it runs. Give the
// engine built on reg the Policy for GraphName.
func Register(reg *durable.Registry) (*Backend, error) {
	b := &Backend{}
	mb := durable.NewManifestBuilder[state](GraphName, durable.WithVersion("1"))
	mb.SetEntrypoint(nodeWaitTurn)
	if err := mb.AddNode(nodeWaitTurn, b.waitTurn, durable.WithNext(nodeExecute), durable.WithHandlerName("platformruns.wait_turn")); err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	if err := mb.AddNode(nodeExecute, b.execute, durable.Terminal(), durable.WithHandlerName("platformruns.execute")); err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	g, err := mb.Build()
	if err != nil {
		return nil, fmt.Errorf("register platform runs: %w", err)
	}
	if err := reg.Register(g); err != nil {
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

// waitTurn fails while an earlier unfinished run of the thread exists.
func (b *Backend) waitTurn(ctx context.Context, s state) (any, error) {
	eng, _ := b.bound()
	if eng == nil {
		return nil, errNotBound
	}
	runs, err := unfinished(ctx, eng)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.ThreadID == s.ThreadID && before(r, s) {
			return nil, errNotYourTurn
		}
	}
	return nil, nil
}

func before(r, s state) bool {
	return cmp.Or(cmp.Compare(r.CreatedAt, s.CreatedAt), cmp.Compare(r.RunID, s.RunID)) < 0
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
		r, err := eng.WaitRun(ctx, s.RunID, func(r engine.Run) bool { return r.Status == engine.StatusTerminated })
		if err == nil && r.Status == engine.StatusTerminated {
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

// unfinished returns the states of the pending and running platform runs.
func unfinished(ctx context.Context, eng Engine) ([]state, error) {
	var out []state
	for _, st := range []engine.RunStatus{engine.StatusPending, engine.StatusRunning} {
		runs, err := listAll(ctx, eng, st)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			if s, ok := decodeState(r); ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// listAll pages through the platform runs with a status ("" for all).
func listAll(ctx context.Context, eng Engine, status engine.RunStatus) ([]engine.Run, error) {
	var out []engine.Run
	q := engine.RunQuery{GraphName: GraphName, Status: status, Limit: 1000}
	for {
		page, err := eng.ListRuns(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list platform runs: %w", err)
		}
		out = append(out, page.Runs...)
		if page.ContinuationToken == "" {
			return out, nil
		}
		q.ContinuationToken = page.ContinuationToken
	}
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
	switch r.Status {
	case engine.StatusPending:
		run.Status = platform.RunPending
	case engine.StatusRunning:
		var cs struct {
			Node string `json:"current_node"`
		}
		_ = json.Unmarshal(r.CustomStatus, &cs)
		run.Status = platform.RunPending
		if cs.Node == nodeExecute {
			run.Status = platform.RunRunning
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
	if _, err := eng.StartRun(ctx, engine.StartRunRequest{GraphName: GraphName, InstanceID: run.RunID, Input: in, Metadata: md}); err != nil {
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

// List implements platform.RunBackend.
func (b *Backend) List(ctx context.Context, threadID string, status platform.RunStatus, limit, offset int) ([]platform.Run, error) {
	eng, err := b.engine()
	if err != nil {
		return nil, err
	}
	all, err := listAll(ctx, eng, "")
	if err != nil {
		return nil, err
	}
	out := []platform.Run{}
	for _, r := range all {
		if run, ok := toPlatform(r); ok && run.ThreadID == threadID && (status == "" || run.Status == status) {
			out = append(out, run)
		}
	}
	slices.SortFunc(out, func(x, y platform.Run) int {
		return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), cmp.Compare(y.RunID, x.RunID))
	})
	out = out[min(offset, len(out)):]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Join implements platform.RunBackend.
func (b *Backend) Join(ctx context.Context, threadID, runID string) (platform.Run, error) {
	eng, err := b.engine()
	if err != nil {
		return platform.Run{}, err
	}
	if _, err := b.Get(ctx, threadID, runID); err != nil {
		return platform.Run{}, err
	}
	r, err := eng.WaitRun(ctx, runID, func(r engine.Run) bool { return r.Status.Finished() })
	if err != nil {
		return platform.Run{}, fmt.Errorf("join run %s: %w", runID, err)
	}
	run, _ := toPlatform(r)
	return run, nil
}

// Cancel implements platform.RunBackend: it terminates the durable run; a running graph is
// interrupted by its execute node within about 100 ms.
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
	if wait {
		_, err := b.Join(ctx, threadID, runID)
		return err
	}
	return nil
}

// Active implements platform.RunBackend.
func (b *Backend) Active(ctx context.Context, threadID string) (bool, error) {
	eng, err := b.engine()
	if err != nil {
		return false, err
	}
	runs, err := unfinished(ctx, eng)
	if err != nil {
		return false, err
	}
	for _, s := range runs {
		if s.ThreadID == threadID {
			return true, nil
		}
	}
	return false, nil
}
