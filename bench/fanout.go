package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/microsoft/durabletask-go/api"
	"github.com/microsoft/durabletask-go/backend"
	"github.com/microsoft/durabletask-go/backend/sqlite"
	"github.com/microsoft/durabletask-go/task"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// The fan-out workload: a run squares each of its items at once, one branch (funcgraph) or
// one activity (durabletask-go) per item, and sums the squares once all are in. A branch
// counts as one step of Result.

// Names of the fan-out on both engines.
const (
	fanOutGraphName = "fanout"
	dtFanOut        = "fg_fanout"
	dtSquare        = "fg_square"
)

// fanState is the state of a fan-out run.
type fanState struct {
	Items   []int `json:"items"`
	Squares []int `json:"squares"`
	Total   int   `json:"total"`
}

// fanInput is the input of a fan-out of width items, 1..width.
func fanInput(width int) fanState {
	s := fanState{Items: make([]int, width), Squares: []int{}}
	for i := range s.Items {
		s.Items[i] = i + 1
	}
	return s
}

// fanOutGraph is the fan-out on funcgraph: plan maps square over the items, square appends
// its item's square (the squares reduced in item order), sum adds them up at the join.
func fanOutGraph() (durable.Graph, error) {
	b := durable.NewManifestBuilder[fanState](fanOutGraphName)
	b.SetEntrypoint("plan")
	err := b.AddStep("plan", func(_ context.Context, s fanState) (fanState, error) { return s, nil },
		durable.WithHandlerName("bench.fanout.plan"),
		durable.WithDecide(func(_ context.Context, s fanState) (durable.RouteDecision, error) {
			return durable.Map("sum", "square", s.Items), nil
		}), durable.WithRouteName("bench.fanout.map"))
	if err == nil {
		err = b.AddStep("square", func(ctx context.Context, s fanState) (fanState, error) {
			v, err := durable.BranchItem[int](ctx)
			s.Squares = append(s.Squares, v*v)
			return s, err
		}, durable.WithHandlerName("bench.fanout.square"))
	}
	if err == nil {
		err = b.AddStep("sum", func(_ context.Context, s fanState) (fanState, error) {
			for _, v := range s.Squares {
				s.Total += v
			}
			return s, nil
		}, durable.WithHandlerName("bench.fanout.sum"), durable.Terminal())
	}
	if err == nil {
		err = b.Reduce("squares", durable.Append)
	}
	if err != nil {
		return nil, err
	}
	return b.Build()
}

// FuncgraphFanOut is the fan-out on funcgraph's engine with the embedded memory backend.
type FuncgraphFanOut struct {
	Funcgraph
	width int
}

// NewFuncgraphFanOut starts funcgraph's engine with concurrency dispatcher workers for
// fan-outs of width branches. Close stops it.
func NewFuncgraphFanOut(ctx context.Context, concurrency, width int, interval time.Duration) (*FuncgraphFanOut, error) {
	g, err := fanOutGraph()
	if err != nil {
		return nil, fmt.Errorf("build fan-out graph: %w", err)
	}
	eng, err := startEngine(ctx, g, concurrency)
	if err != nil {
		return nil, err
	}
	return &FuncgraphFanOut{Funcgraph: Funcgraph{eng: eng, concurrency: concurrency, interval: interval}, width: width}, nil
}

// Run measures runs fan-out runs; Steps counts their branches.
func (f *FuncgraphFanOut) Run(ctx context.Context, runs int) (Result, error) {
	elapsed, err := measure(ctx, f, runs, f.interval)
	if err != nil {
		return Result{}, fmt.Errorf("measure funcgraph fan-out: %w", err)
	}
	return Result{Engine: "funcgraph", Runs: runs, Steps: runs * f.width, Concurrency: f.concurrency, Elapsed: elapsed}, nil
}

func (f *FuncgraphFanOut) start(ctx context.Context, _ int) (string, error) {
	input, err := json.Marshal(fanInput(f.width))
	if err != nil {
		return "", err
	}
	run, err := f.eng.StartRun(ctx, engine.StartRunRequest{GraphName: fanOutGraphName, Input: input})
	return run.InstanceID, err
}

// DurableTaskFanOut is the fan-out on durabletask-go v0.6.0 with its in-memory SQLite
// backend: an orchestrator that calls one activity per item, all at once, then awaits them.
type DurableTaskFanOut struct {
	DurableTask
	width int
}

// NewDurableTaskFanOut starts a durabletask-go task hub worker for fan-outs of width
// activities. Close stops it.
func NewDurableTaskFanOut(ctx context.Context, concurrency, width int, interval time.Duration) (*DurableTaskFanOut, error) {
	r := task.NewTaskRegistry()
	if err := r.AddOrchestratorN(dtFanOut, fanOutOrchestrator); err != nil {
		return nil, fmt.Errorf("register orchestrator: %w", err)
	}
	if err := r.AddActivityN(dtSquare, squareActivity); err != nil {
		return nil, fmt.Errorf("register activity: %w", err)
	}
	logger := quietLogger{}
	be := sqlite.NewSqliteBackend(sqlite.NewSqliteOptions(""), logger)
	executor := task.NewTaskExecutor(r)
	par := backend.WithMaxParallelism(int32(concurrency))
	worker := backend.NewTaskHubWorker(be, backend.NewOrchestrationWorker(be, executor, logger, par),
		backend.NewActivityTaskWorker(be, executor, logger, par), logger)
	if err := worker.Start(ctx); err != nil {
		return nil, fmt.Errorf("start task hub worker: %w", err)
	}
	return &DurableTaskFanOut{DurableTask: DurableTask{client: backend.NewTaskHubClient(be), worker: worker, concurrency: concurrency, interval: interval}, width: width}, nil
}

// Run measures runs fan-out runs; Steps counts their activities.
func (d *DurableTaskFanOut) Run(ctx context.Context, runs int) (Result, error) {
	elapsed, err := measure(ctx, d, runs, d.interval)
	if err != nil {
		return Result{}, fmt.Errorf("measure durabletask-go fan-out: %w", err)
	}
	return Result{Engine: "durabletask", Runs: runs, Steps: runs * d.width, Concurrency: d.concurrency, Elapsed: elapsed}, nil
}

func (d *DurableTaskFanOut) start(ctx context.Context, _ int) (string, error) {
	id, err := d.client.ScheduleNewOrchestration(ctx, dtFanOut, api.WithInput(fanInput(d.width)))
	return string(id), err
}

// fanOutOrchestrator calls square for every item at once, awaits them in item order and sums.
func fanOutOrchestrator(ctx *task.OrchestrationContext) (any, error) {
	var s fanState
	if err := ctx.GetInput(&s); err != nil {
		return nil, err
	}
	calls := make([]task.Task, len(s.Items))
	for i, v := range s.Items {
		calls[i] = ctx.CallActivity(dtSquare, task.WithActivityInput(v))
	}
	for _, c := range calls {
		var sq int
		if err := c.Await(&sq); err != nil {
			return nil, err
		}
		s.Squares = append(s.Squares, sq)
		s.Total += sq
	}
	return s, nil
}

func squareActivity(ctx task.ActivityContext) (any, error) {
	var v int
	if err := ctx.GetInput(&v); err != nil {
		return nil, err
	}
	return v * v, nil
}
