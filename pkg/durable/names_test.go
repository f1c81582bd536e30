package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// namedAgent is a user's graph with every handler named by default (methods, a typed step, a
// typed decision, a map route, one function on two nodes).
type namedAgent struct{}

type agentState struct {
	Plan  string `json:"plan"`
	Steps int    `json:"steps"`
}

func (a *namedAgent) plan(_ context.Context, s agentState) (agentState, error) {
	s.Plan = "p"
	return s, nil
}

func (a *namedAgent) decide(context.Context, agentState) (durable.RouteDecision, error) {
	return durable.WaitForEvent("approve", "act"), nil
}

func (a *namedAgent) act(_ context.Context, s agentState) (any, error) {
	return durable.Update{"steps": s.Steps + 1}, nil
}

func agentRoute(_ context.Context, s agentState) (any, error) {
	if s.Steps < 2 {
		return "act", nil
	}
	return "finish", nil
}

func agentFinish(context.Context, agentState) (any, error) { return nil, nil }

// buildAgent builds the agent graph with default names.
func buildAgent(t testing.TB) durable.GraphRegistration[agentState] {
	t.Helper()
	a := &namedAgent{}
	b := durable.NewManifestBuilder[agentState]("agent")
	b.SetEntrypoint("plan")
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(b.AddStep("plan", a.plan, durable.WithDecide(a.decide)))
	check(b.AddNode("act", a.act, durable.WithRoute(agentRoute)))
	check(b.AddNode("finish", agentFinish, durable.WithNext("end")))
	check(b.AddNode("end", agentFinish, durable.Terminal()))
	check(durable.OnEvent(b, "approve", func(_ context.Context, s agentState, _ bool) (agentState, error) { return s, nil }))
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
		if !ok || m.GraphHash != hash {
			t.Errorf("%s: hash %q, want %q", name, m.GraphHash, hash)
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

// TestDefaultNames_AreTheNodes: a graph named by default names its handlers after its nodes.
func TestDefaultNames_AreTheNodes(t *testing.T) {
	t.Parallel()
	m := buildAgent(t).Manifest()
	var names []string
	for _, n := range m.Nodes {
		names = append(names, n.HandlerName+"/"+n.RouteHandlerName)
	}
	if got := fmt.Sprint(names); got != "[node:plan/route:plan node:act/route:act node:finish/ node:end/]" {
		t.Errorf("default names %s", got)
	}
}

// TestDefaultNames_RenamingAFunctionKeepsTheHash: the same graph over other Go functions is
// the same version.
func TestDefaultNames_RenamingAFunctionKeepsTheHash(t *testing.T) {
	t.Parallel()
	build := func(step durable.StepFunc[agentState], route durable.DecideFunc[agentState]) durable.GraphManifest {
		b := durable.NewManifestBuilder[agentState]("renamed")
		b.SetEntrypoint("a")
		if err := b.AddStep("a", step, durable.WithDecide(route)); err != nil {
			t.Fatal(err)
		}
		if err := b.AddNode("b", agentFinish, durable.Terminal()); err != nil {
			t.Fatal(err)
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g.Manifest()
	}
	a := &namedAgent{}
	one := build(a.plan, a.decide)
	two := build(func(_ context.Context, s agentState) (agentState, error) { return s, nil },
		func(context.Context, agentState) (durable.RouteDecision, error) { return durable.Next("b"), nil })
	if one.GraphHash != two.GraphHash {
		t.Errorf("hashes %s and %s: renaming a function made a new version", one.GraphHash, two.GraphHash)
	}
}
