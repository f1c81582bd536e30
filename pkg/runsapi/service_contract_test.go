package runsapi_test

import (
	"context"
	"encoding/json"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// contractMaxSteps is the max-steps bound of the looping test graph.
const contractMaxSteps = 5

// gate holds the first node of the "gated" test graph until released, so that a test can
// send an event before the run reaches its wait.
var gates = struct {
	ch map[string]chan struct{}
}{ch: map[string]chan struct{}{}}

type loopState struct {
	Count int `json:"count"`
}

type gatedState struct {
	Gate     string `json:"gate"`
	Approved bool   `json:"approved"`
}

// testGraphs returns "loop" (a self-loop that never completes) and "gated" (waits for
// "approval" after a first node that blocks on its gate).
func testGraphs(t *testing.T) []durable.Graph {
	t.Helper()
	lb := durable.NewManifestBuilder[loopState]("loop")
	lb.SetEntrypoint("spin")
	_ = lb.AddNode("spin", func(_ context.Context, s loopState) (any, error) { return durable.Update{"count": s.Count + 1}, nil },
		durable.WithHandlerName("tests.loop.spin"), durable.WithRouteName("tests.loop.route"),
		durable.WithRoute(func(context.Context, loopState) (any, error) { return "spin", nil }))
	loop, err := lb.Build()
	if err != nil {
		t.Fatal(err)
	}
	gb := durable.NewManifestBuilder[gatedState]("gated")
	gb.SetEntrypoint("hold")
	_ = gb.AddNode("hold", func(ctx context.Context, s gatedState) (any, error) {
		select {
		case <-gates.ch[s.Gate]:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, durable.WithHandlerName("tests.gated.hold"), durable.WithRouteName("tests.gated.route"),
		durable.WithRoute(func(context.Context, gatedState) (any, error) {
			return durable.WaitForEvent("approval", "finish"), nil
		}))
	_ = gb.AddNode("finish", func(context.Context, gatedState) (any, error) { return nil, nil },
		durable.WithHandlerName("tests.gated.finish"), durable.Terminal())
	_ = gb.AddEventHandler("approval", func(_ context.Context, _ gatedState, payload json.RawMessage) (any, error) {
		var m struct {
			Approved bool `json:"approved"`
		}
		_ = json.Unmarshal(payload, &m)
		return durable.Update{"approved": m.Approved}, nil
	})
	gated, err := gb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return []durable.Graph{loop, gated}
}

// serveEngine serves the service over a real engine on the memory backend through both
// transports. The registry holds the three examples and the test graphs.
func serveEngine(t *testing.T) []funchosttest.Transport {
	t.Helper()
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range testGraphs(t) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	_, trs := serveRuns(t, engine.Options{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Policies: map[string]engine.GraphPolicy{"loop": {MaxSteps: contractMaxSteps}},
	})
	return trs
}

// serveRuns serves the service through both transports over a started engine built from
// opts (registry and storage set; the logger is the test's), closed when the test ends.
func serveRuns(t *testing.T, opts engine.Options) (*engine.Engine, []funchosttest.Transport) {
	t.Helper()
	return serveRunsWith(t, opts, runsapi.Options{})
}

// serveRunsWith is serveRuns with the service's options api (Runs, Registry and Logger are
// filled in).
func serveRunsWith(t *testing.T, opts engine.Options, api runsapi.Options) (*engine.Engine, []funchosttest.Transport) {
	t.Helper()
	opts.Logger = funchosttest.TestLogger(t)
	eng, err := engine.New(opts)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	api.Runs, api.Registry, api.Logger = eng, opts.Registry, opts.Logger
	svc, err := runsapi.NewService(api)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatalf("FunctionApp: %v", err)
	}
	return eng, funchosttest.Transports(t, app)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
