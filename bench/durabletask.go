package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/microsoft/durabletask-go/api"
	"github.com/microsoft/durabletask-go/backend"
	"github.com/microsoft/durabletask-go/backend/sqlite"
	"github.com/microsoft/durabletask-go/task"
)

// Names of the durabletask-go orchestrator and activities of the chain.
const (
	dtOrchestrator = "fg_orchestrator"
	dtExecuteNode  = "fg_execute_node"
	dtResolveRoute = "fg_resolve_route"
)

// chainNodes is the chain: each node's route leads to the next; the last completes.
var chainNodes = [ChainSteps]string{"step_1", "step_2", "step_3"}

// chainState is the state carried through the chain.
type chainState struct {
	Seed  int      `json:"seed"`
	Trail []string `json:"trail"`
}

// stepInput is the input of both activities.
type stepInput struct {
	Node  string     `json:"node"`
	State chainState `json:"state"`
}

// DurableTask is the chain on durabletask-go v0.6.0 with its in-memory SQLite backend, run
// in-process by one task hub worker.
type DurableTask struct {
	client      backend.TaskHubClient
	worker      backend.TaskHubWorker
	concurrency int
	interval    time.Duration
}

// NewDurableTask starts a durabletask-go task hub worker whose orchestration and activity
// workers both run concurrency work items in parallel. Close stops it.
func NewDurableTask(ctx context.Context, concurrency int, interval time.Duration) (*DurableTask, error) {
	r := task.NewTaskRegistry()
	if err := r.AddOrchestratorN(dtOrchestrator, chainOrchestrator); err != nil {
		return nil, fmt.Errorf("register orchestrator: %w", err)
	}
	if err := r.AddActivityN(dtExecuteNode, executeNodeActivity); err != nil {
		return nil, fmt.Errorf("register activity: %w", err)
	}
	if err := r.AddActivityN(dtResolveRoute, resolveRouteActivity); err != nil {
		return nil, fmt.Errorf("register activity: %w", err)
	}
	logger := quietLogger{}
	be := sqlite.NewSqliteBackend(sqlite.NewSqliteOptions(""), logger)
	executor := task.NewTaskExecutor(r)
	par := backend.WithMaxParallelism(int32(concurrency))
	orch := backend.NewOrchestrationWorker(be, executor, logger, par)
	act := backend.NewActivityTaskWorker(be, executor, logger, par)
	worker := backend.NewTaskHubWorker(be, orch, act, logger)
	if err := worker.Start(ctx); err != nil {
		return nil, fmt.Errorf("start task hub worker: %w", err)
	}
	return &DurableTask{client: backend.NewTaskHubClient(be), worker: worker, concurrency: concurrency, interval: interval}, nil
}

// Close stops the worker.
func (d *DurableTask) Close(ctx context.Context) error { return d.worker.Shutdown(ctx) }

// Run measures runs chain runs.
func (d *DurableTask) Run(ctx context.Context, runs int) (Result, error) {
	elapsed, err := measure(ctx, d, runs, d.interval)
	if err != nil {
		return Result{}, fmt.Errorf("measure durabletask-go: %w", err)
	}
	return Result{Engine: "durabletask", Runs: runs, Steps: runs * ChainSteps, Concurrency: d.concurrency, Elapsed: elapsed}, nil
}

func (d *DurableTask) start(ctx context.Context, i int) (string, error) {
	id, err := d.client.ScheduleNewOrchestration(ctx, dtOrchestrator, api.WithInput(chainState{Seed: i, Trail: []string{}}))
	return string(id), err
}

func (d *DurableTask) done(ctx context.Context, id string) (bool, error) {
	md, err := d.client.FetchOrchestrationMetadata(ctx, api.InstanceID(id))
	if err != nil {
		return false, err
	}
	switch {
	case !md.IsComplete():
		return false, nil
	case md.RuntimeStatus != api.RUNTIME_STATUS_COMPLETED:
		return false, fmt.Errorf("run %s ended %s", id, md.RuntimeStatus)
	}
	return true, nil
}

// Output returns the final state of a completed run (for tests).
func (d *DurableTask) Output(ctx context.Context, id string) (json.RawMessage, error) {
	md, err := d.client.FetchOrchestrationMetadata(ctx, api.InstanceID(id))
	if err != nil {
		return nil, err
	}
	return json.RawMessage(md.SerializedOutput), nil
}

// chainOrchestrator is funcgraph's loop on durabletask-go: per visit one execute-node and one
// resolve-route activity.
func chainOrchestrator(ctx *task.OrchestrationContext) (any, error) {
	var state chainState
	if err := ctx.GetInput(&state); err != nil {
		return nil, err
	}
	node := chainNodes[0]
	for visits := 1; ; visits++ {
		if visits > 1000 {
			return nil, errors.New("max steps exceeded")
		}
		if err := ctx.CallActivity(dtExecuteNode, task.WithActivityInput(stepInput{Node: node, State: state})).Await(&state); err != nil {
			return nil, err
		}
		var next string
		if err := ctx.CallActivity(dtResolveRoute, task.WithActivityInput(stepInput{Node: node, State: state})).Await(&next); err != nil {
			return nil, err
		}
		if next == "" {
			return state, nil
		}
		node = next
	}
}

func executeNodeActivity(ctx task.ActivityContext) (any, error) {
	var in stepInput
	if err := ctx.GetInput(&in); err != nil {
		return nil, err
	}
	in.State.Trail = append(in.State.Trail, in.Node)
	return in.State, nil
}

func resolveRouteActivity(ctx task.ActivityContext) (any, error) {
	var in stepInput
	if err := ctx.GetInput(&in); err != nil {
		return nil, err
	}
	return nextNode(in.Node), nil
}

// nextNode is the chain's route: the following node, or "" after the last.
func nextNode(node string) string {
	for i, n := range chainNodes[:len(chainNodes)-1] {
		if n == node {
			return chainNodes[i+1]
		}
	}
	return ""
}

// quietLogger drops durabletask-go's logs below Error.
type quietLogger struct{}

func (quietLogger) Debug(...any)              {}
func (quietLogger) Debugf(string, ...any)     {}
func (quietLogger) Info(...any)               {}
func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Warn(...any)               {}
func (quietLogger) Warnf(string, ...any)      {}
func (quietLogger) Error(v ...any)            { log.Print(v...) }
func (quietLogger) Errorf(f string, v ...any) { log.Printf(f, v...) }
