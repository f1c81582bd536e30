package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// legacyAgent is a user's graph as releases before node-derived default names hashed it:
// every handler named by default (methods, a typed step, a typed decision, a map route, one
// function on two nodes). Its package path and function names are part of its legacy hash:
// renaming anything here changes legacyAgentHash.
type legacyAgent struct{}

type legacyState struct {
	Plan  string `json:"plan"`
	Steps int    `json:"steps"`
}

func (a *legacyAgent) plan(_ context.Context, s legacyState) (legacyState, error) {
	s.Plan = "p"
	return s, nil
}

func (a *legacyAgent) decide(context.Context, legacyState) (durable.RouteDecision, error) {
	return durable.WaitForEvent("approve", "act"), nil
}

func (a *legacyAgent) act(_ context.Context, s legacyState) (any, error) {
	return durable.Update{"steps": s.Steps + 1}, nil
}

func legacyRoute(_ context.Context, s legacyState) (any, error) {
	if s.Steps < 2 {
		return "act", nil
	}
	return "finish", nil
}

func legacyFinish(context.Context, legacyState) (any, error) { return nil, nil }

// legacyAgentHash is the hash the code before node-derived names computed for
// buildLegacyAgent(false): FuncName defaults, e.g.
// "github.com/funcgraph/funcgraph/pkg/durable_test.(*legacyAgent).plan-fm".
const legacyAgentHash = "722cddb21497da30"

// buildLegacyAgent builds the agent graph with default names, or, with oldNames, with the
// names the releases before node-derived names gave it by default (FuncName), as that
// release's binary registered it.
func buildLegacyAgent(t testing.TB, oldNames bool) durable.GraphRegistration[legacyState] {
	t.Helper()
	a := &legacyAgent{}
	name := func(fn any) []durable.NodeOption {
		if !oldNames {
			return nil
		}
		return []durable.NodeOption{durable.WithHandlerName(graphrun.FuncName(fn))}
	}
	route := func(fn any) []durable.NodeOption {
		if !oldNames {
			return nil
		}
		return []durable.NodeOption{durable.WithRouteName(graphrun.FuncName(fn))}
	}
	b := durable.NewManifestBuilder[legacyState]("agent")
	b.SetEntrypoint("plan")
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(b.AddStep("plan", a.plan, append(append(name(a.plan), route(a.decide)...), durable.WithDecide(a.decide))...))
	check(b.AddNode("act", a.act, append(append(name(a.act), route(legacyRoute)...), durable.WithRoute(legacyRoute))...))
	check(b.AddNode("finish", legacyFinish, append(name(legacyFinish), durable.WithNext("end"))...))
	check(b.AddNode("end", legacyFinish, append(name(legacyFinish), durable.Terminal())...))
	check(durable.OnEvent(b, "approve", func(_ context.Context, s legacyState, _ bool) (legacyState, error) { return s, nil }))
	g, err := b.Build()
	check(err)
	return g
}

// TestGraphHash_ExplicitNames_Unchanged pins the hashes of graphs whose handlers are named
// explicitly: default names and the new constructs leave them as they were.
func TestGraphHash_ExplicitNames_Unchanged(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"data_pipeline":        "6135ea2aa13d431c",
		"content_classifier":   "0efaf6117909cd4e",
		"support_agent":        "af183f226f37e6fc",
		"approvals 1":          "12f0eec9b8081847",
		"approvals 2":          "b3a0f7c2008da786",
		"fg_platform_run 2":    "a8966ad12fb09bc5",
		"fg_platform_run 1":    "7453bc7a9cc7d313",
		"pinned (all options)": "ad70e9c4cb6dfb86",
	}
	got := map[string]durable.GraphManifest{}
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		got[g.Manifest().GraphName] = g.Manifest()
	}
	for _, v := range []string{"1", "2"} {
		got["approvals "+v] = enginetest.ApprovalGraph(t, v).Manifest()
	}
	reg := durable.NewRegistry()
	if _, err := platformruns.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, g := range reg.Versions(platformruns.GraphName) {
		got[platformruns.GraphName+" "+g.Manifest().Version] = g.Manifest()
	}
	got["pinned (all options)"] = pinnedGraph(t).Manifest()
	for name, hash := range want {
		m, ok := got[name]
		if !ok || m.GraphHash != hash || m.LegacyGraphHash() != "" {
			t.Errorf("%s: hash %q legacy %q, want %q and no legacy hash", name, m.GraphHash, m.LegacyGraphHash(), hash)
		}
		if h, err := m.ComputeHash(); err != nil || h != hash {
			t.Errorf("%s: ComputeHash %q %v", name, h, err)
		}
	}
}

type pinState struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// pinnedGraph uses every option that existed before per-node policies, with explicit names.
func pinnedGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[pinState]("pinned", durable.WithVersion("3.1"),
		durable.WithMetadata(map[string]any{"ratio": 1.0, "n": 2, "tags": []any{"a", "é"}}))
	b.SetEntrypoint("classify")
	nop := func(context.Context, pinState) (any, error) { return nil, nil }
	route := func(context.Context, pinState) (any, error) { return nil, nil }
	event := func(context.Context, pinState, json.RawMessage) (any, error) { return nil, nil }
	for _, err := range []error{
		b.AddNode("classify", nop, durable.WithHandlerName("pin.classify"), durable.WithRoute(route), durable.WithRouteName("pin.route"), durable.WithNext("answer")),
		b.AddNode("answer", nop, durable.WithHandlerName("pin.answer"), durable.WithNext("end")),
		b.AddNode("review", nop, durable.WithHandlerName("pin.classify")),
		b.AddNode("end", nop, durable.WithHandlerName("pin.end"), durable.Terminal()),
		b.AddEventHandler("approve", event),
		b.AddEventHandler("reject", event),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLegacyGraphHash_IsTheHashBeforeNodeDerivedNames: a graph named by default hashes by its
// node names, and its legacy hash is the one the code before computed for it.
func TestLegacyGraphHash_IsTheHashBeforeNodeDerivedNames(t *testing.T) {
	t.Parallel()
	g := buildLegacyAgent(t, false)
	m := g.Manifest()
	if m.LegacyGraphHash() != legacyAgentHash || m.GraphHash == legacyAgentHash {
		t.Fatalf("hash %s legacy %s, want legacy %s", m.GraphHash, m.LegacyGraphHash(), legacyAgentHash)
	}
	var names []string
	for _, n := range m.Nodes {
		names = append(names, n.HandlerName+"/"+n.RouteHandlerName)
	}
	if got := fmt.Sprint(names); got != "[node:plan/route:plan node:act/route:act node:finish/ node:end/]" {
		t.Errorf("default names %s", got)
	}
	// The release before registered the graph under the FuncName names: the same hash.
	if old := buildLegacyAgent(t, true).Manifest(); old.GraphHash != legacyAgentHash || old.LegacyGraphHash() != "" {
		t.Errorf("old-style build hashes %s (legacy %q), want %s", old.GraphHash, old.LegacyGraphHash(), legacyAgentHash)
	}
}

// TestDefaultNames_RenamingAFunctionKeepsTheHash: the same graph over other Go functions is
// the same version; under FuncName names it was not.
func TestDefaultNames_RenamingAFunctionKeepsTheHash(t *testing.T) {
	t.Parallel()
	build := func(step durable.StepFunc[legacyState], route durable.DecideFunc[legacyState]) durable.GraphManifest {
		b := durable.NewManifestBuilder[legacyState]("renamed")
		b.SetEntrypoint("a")
		if err := b.AddStep("a", step, durable.WithDecide(route)); err != nil {
			t.Fatal(err)
		}
		if err := b.AddNode("b", legacyFinish, durable.Terminal()); err != nil {
			t.Fatal(err)
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g.Manifest()
	}
	a := &legacyAgent{}
	one := build(a.plan, a.decide)
	two := build(func(_ context.Context, s legacyState) (legacyState, error) { return s, nil },
		func(context.Context, legacyState) (durable.RouteDecision, error) { return durable.Next("b"), nil })
	if one.GraphHash != two.GraphHash {
		t.Errorf("hashes %s and %s: renaming a function made a new version", one.GraphHash, two.GraphHash)
	}
	if one.LegacyGraphHash() == two.LegacyGraphHash() {
		t.Errorf("legacy hashes both %s: they named the functions", one.LegacyGraphHash())
	}
}

// TestRegistry_LegacyHash_ResolvesWithoutBeingAVersion: Lookup finds a graph by its legacy
// hash; Versions, List and Fragments do not show the alias; a graph registered with that very
// hash takes precedence.
func TestRegistry_LegacyHash_ResolvesWithoutBeingAVersion(t *testing.T) {
	t.Parallel()
	g := buildLegacyAgent(t, false)
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	got, err := reg.Lookup("agent", legacyAgentHash)
	if err != nil || got.Manifest().GraphHash != g.Manifest().GraphHash {
		t.Fatalf("Lookup(legacy) = %v, %v", got, err)
	}
	if _, err := reg.Lookup("other", legacyAgentHash); err == nil {
		t.Error("the alias resolved under another graph name")
	}
	if v := reg.Versions("agent"); len(v) != 1 || v[0].Manifest().GraphHash != g.Manifest().GraphHash {
		t.Errorf("Versions = %d graphs, want the one graph", len(v))
	}
	if f := reg.Public(); len(f) != 1 || f[0].Manifest().GraphHash != g.Manifest().GraphHash {
		t.Errorf("Fragments = %+v", f)
	}
	old := buildLegacyAgent(t, true) // a graph whose own hash is the alias
	if err := reg.Register(durable.Previous(old)); err != nil {
		t.Fatalf("Register of the legacy hash as a graph: %v", err)
	}
	if got, _ := reg.Lookup("agent", legacyAgentHash); got.Manifest().GraphHash != legacyAgentHash {
		t.Errorf("Lookup(legacy) after registering it = %s, want the registered graph", got.Manifest().GraphHash)
	}
}

// TestUpgrade_RunPinnedToTheLegacyHashFinishes: a run the release before started (its graph
// hashed under FuncName names) and left waiting finishes after the upgrade, on the same user
// code built with node-derived names.
func TestUpgrade_RunPinnedToTheLegacyHashFinishes(t *testing.T) {
	t.Parallel()
	store, queue, payloads := memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()
	newEngine := func(g durable.Graph) *engine.Engine {
		reg := durable.NewRegistry()
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	drive := func(e *engine.Engine) {
		for range 100 {
			msgs, err := queue.Receive(t.Context(), engine.MaxReceive, engine.DefaultVisibilityTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				return
			}
			for _, m := range msgs {
				if err := e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
					t.Fatal(err)
				}
				if err := queue.Delete(t.Context(), m); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Fatal("queue never drained")
	}

	before := newEngine(buildLegacyAgent(t, true)) // the release before
	if _, err := before.StartRun(t.Context(), engine.StartRunRequest{GraphName: "agent", InstanceID: "r1", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	drive(before)
	if run, _ := before.GetRun(t.Context(), "r1"); run.GraphHash != legacyAgentHash {
		t.Fatalf("run pinned to %s, want the legacy hash %s", run.GraphHash, legacyAgentHash)
	} else if ev, ok := run.WaitingFor(); !ok || ev != "approve" {
		t.Fatalf("before the upgrade the run is %s, want waiting for approve", run.RuntimeStatus)
	}

	after := newEngine(buildLegacyAgent(t, false)) // the upgrade: same code, new default names
	if err := after.RaiseEvent(t.Context(), "r1", "approve", json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	drive(after)
	run, err := after.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusCompleted || run.GraphHash != legacyAgentHash {
		t.Fatalf("after the upgrade: %s on %s, output %s", run.RuntimeStatus, run.GraphHash, run.Output)
	}
	if s, err := engine.DecodeState[legacyState](run); err != nil || s.Steps != 2 || s.Plan != "p" {
		t.Errorf("final state %+v %v", s, err)
	}
}
