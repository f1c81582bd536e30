package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// chainGraphName is the funcgraph graph of the chain.
const chainGraphName = "chain"

// Funcgraph is the chain on funcgraph's engine with the embedded memory backend.
type Funcgraph struct {
	eng         *engine.Engine
	concurrency int
	interval    time.Duration
}

// chainGraph builds the chain: three nodes, each with a route handler naming the next node;
// the last one's route completes the run.
func chainGraph() (durable.Graph, error) {
	b := durable.NewManifestBuilder[chainState](chainGraphName)
	b.SetEntrypoint(chainNodes[0])
	for _, n := range chainNodes {
		node := n
		err := b.AddNode(node,
			func(_ context.Context, s chainState) (any, error) {
				return durable.Update{"trail": append(s.Trail, node)}, nil
			},
			durable.WithHandlerName("bench.chain."+node),
			durable.WithRoute(func(context.Context, chainState) (any, error) {
				if next := nextNode(node); next != "" {
					return durable.Next(next), nil
				}
				return durable.Complete(""), nil
			}),
			durable.WithRouteName("bench.chain.route_after_"+node))
		if err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// NewFuncgraph starts funcgraph's engine with concurrency dispatcher workers on the memory
// backend. Close stops it.
func NewFuncgraph(ctx context.Context, concurrency int, interval time.Duration) (*Funcgraph, error) {
	g, err := chainGraph()
	if err != nil {
		return nil, fmt.Errorf("build chain graph: %w", err)
	}
	eng, err := startEngine(ctx, g, concurrency)
	if err != nil {
		return nil, err
	}
	return &Funcgraph{eng: eng, concurrency: concurrency, interval: interval}, nil
}

// startEngine starts an engine for g alone on the memory backend, with concurrency dispatcher
// workers.
func startEngine(ctx context.Context, g durable.Graph, concurrency int) (*engine.Engine, error) {
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		return nil, fmt.Errorf("register graph: %w", err)
	}
	eng, err := engine.New(engine.Options{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Concurrency: concurrency,
		// As quiet as durabletask-go's logger in this harness: errors only.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return nil, err
	}
	if err := eng.Start(ctx); err != nil {
		return nil, err
	}
	return eng, nil
}

// Close stops the engine.
func (f *Funcgraph) Close() error { return f.eng.Close() }

// Run measures runs chain runs.
func (f *Funcgraph) Run(ctx context.Context, runs int) (Result, error) {
	elapsed, err := measure(ctx, f, runs, f.interval)
	if err != nil {
		return Result{}, fmt.Errorf("measure funcgraph: %w", err)
	}
	return Result{Engine: "funcgraph", Runs: runs, Steps: runs * ChainSteps, Concurrency: f.concurrency, Elapsed: elapsed}, nil
}

func (f *Funcgraph) start(ctx context.Context, i int) (string, error) {
	input, err := json.Marshal(chainState{Seed: i, Trail: []string{}})
	if err != nil {
		return "", err
	}
	run, err := f.eng.StartRun(ctx, engine.StartRunRequest{GraphName: chainGraphName, Input: input})
	return run.InstanceID, err
}

func (f *Funcgraph) done(ctx context.Context, id string) (bool, error) {
	run, err := f.eng.GetRun(ctx, id)
	if err != nil {
		return false, err
	}
	switch {
	case !run.RuntimeStatus.Finished():
		return false, nil
	case run.RuntimeStatus != engine.StatusCompleted:
		return false, fmt.Errorf("run %s ended %s: %s", id, run.RuntimeStatus, run.Output)
	}
	return true, nil
}

// Output returns the final state of a completed run (for tests).
func (f *Funcgraph) Output(ctx context.Context, id string) (json.RawMessage, error) {
	run, err := f.eng.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	var out struct {
		State json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil {
		return nil, fmt.Errorf("decode output of %s: %w", id, err)
	}
	return out.State, nil
}
