package platform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// liveState is the state of the durable test graphs of the live stream tests.
type liveState struct {
	// Gate names the gate the reply node (or the "slow" branch) waits on after its first
	// pieces; "" waits on none.
	Gate string `json:"gate"`
	// FailFirst makes the reply node's first attempt fail after it wrote and emitted.
	FailFirst bool `json:"fail_first"`
	// Ask makes the first reply wait for the event "followup", which runs reply again.
	Ask      bool     `json:"ask"`
	Replies  int      `json:"replies"`
	Items    []string `json:"items"`
	Answer   string   `json:"answer"`
	Searched []string `json:"searched"`
}

// gates are the tests' gates by name: a node waits until its gate is closed.
type gates struct {
	mu sync.Mutex
	m  map[string]chan struct{} // guarded by mu
}

func (g *gates) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	if g.m[name] == nil {
		g.m[name] = make(chan struct{})
	}
	return g.m[name]
}

// hold waits on gate name ("" none) or ctx.
func (g *gates) hold(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	select {
	case <-g.get(name):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// liveGraphs builds "live_reply" (think, then reply: two message pieces, a custom chunk and an
// emitted event, the gate, a third piece) and "live_fanout" (one branch per item, each emitting
// "searched"; the "slow" branch waits on the gate first).
func liveGraphs(t *testing.T, g *gates) []durable.Graph {
	t.Helper()
	reply := durable.NewManifestBuilder[liveState]("live_reply")
	reply.SetEntrypoint("think")
	err := errors.Join(
		reply.AddStep("think", func(_ context.Context, s liveState) (liveState, error) { s.Answer = ""; return s, nil }, durable.WithNext("reply")),
		reply.AddStep("reply", func(ctx context.Context, s liveState) (liveState, error) {
			info, _ := durable.StepInfoFrom(ctx)
			if err := errors.Join(durable.WriteMessageChunk(ctx, fmt.Sprintf("Hel%d", info.Attempt)), durable.WriteMessageChunk(ctx, "lo"),
				durable.Write(ctx, "progress", map[string]int{"done": 2}), durable.Emit(ctx, "noted", map[string]int{"attempt": info.Attempt})); err != nil {
				return s, err
			}
			if s.FailFirst && info.Attempt == 1 {
				return s, errors.New("model busy")
			}
			if err := g.hold(ctx, s.Gate); err != nil {
				return s, err
			}
			if err := durable.WriteMessageChunk(ctx, "!"); err != nil {
				return s, err
			}
			s.Answer, s.Replies = "Hello!", s.Replies+1
			return s, nil
		}, durable.WithDecide(func(_ context.Context, s liveState) (durable.RouteDecision, error) {
			if s.Ask && s.Replies == 1 {
				return durable.WaitForEvent("followup", "reply"), nil
			}
			return durable.Complete(""), nil
		}), durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond})),
		reply.AddEventHandler("followup", func(_ context.Context, s liveState, _ json.RawMessage) (any, error) { return nil, nil }),
	)
	fan := durable.NewManifestBuilder[liveState]("live_fanout")
	fan.SetEntrypoint("plan")
	err = errors.Join(err,
		fan.AddStep("plan", func(_ context.Context, s liveState) (liveState, error) { return s, nil },
			durable.WithDecide(func(_ context.Context, s liveState) (durable.RouteDecision, error) {
				return durable.Map("done", "search", s.Items), nil
			})),
		fan.AddStep("search", func(ctx context.Context, s liveState) (liveState, error) {
			item, err := durable.BranchItem[string](ctx)
			if err != nil {
				return s, err
			}
			if item == "slow" {
				if err := g.hold(ctx, s.Gate); err != nil {
					return s, err
				}
			}
			s.Searched = append(s.Searched, item)
			return s, durable.Emit(ctx, "searched", map[string]string{"item": item})
		}),
		fan.Reduce("searched", durable.Append),
		fan.AddStep("done", func(_ context.Context, s liveState) (liveState, error) { return s, nil }, durable.Terminal()),
	)
	if err != nil {
		t.Fatal(err)
	}
	var out []durable.Graph
	for _, b := range []*durable.ManifestBuilder[liveState]{reply, fan} {
		built, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, built)
	}
	return out
}

// liveApp serves the live graphs as durable assistants, with background runs, on an engine
// with a live channel in memory, through both transports.
func liveApp(t *testing.T, g *gates) []funchosttest.Transport {
	t.Helper()
	return funchosttest.Transports(t, liveFunctionApp(t, g))
}

// liveFunctionApp is the function app liveApp serves.
func liveFunctionApp(t *testing.T, g *gates) *funchost.FunctionApp {
	t.Helper()
	reg := durable.NewRegistry()
	for _, gr := range liveGraphs(t, g) {
		if err := reg.Register(gr); err != nil {
			t.Fatal(err)
		}
	}
	backend, err := platformruns.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Live: memory.NewLiveStore(), PollInterval: 10 * time.Millisecond, Logger: funchosttest.TestLogger(t),
		Policies: map[string]engine.GraphPolicy{platformruns.GraphName: platformruns.Policy}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := platform.Mount(app, platform.Options{Threads: threads.NewMemory(), Durable: platformruns.NewAssistants(eng, reg.Public()),
		NewRunBackend: backend.Bind(eng)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(); _ = eng.Close() })
	return app.FunctionApp()
}
