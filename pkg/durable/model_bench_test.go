package durable

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// buildChain builds a linear graph of n nodes sharing one handler, the last one terminal.
func buildChain(b *testing.B, n int) (GraphRegistration[testState], error) {
	b.Helper()
	mb := NewManifestBuilder[testState]("chain", WithMetadata(map[string]any{"size": n, "ratio": 0.5, "tags": []any{"a", "b"}}))
	mb.SetEntrypoint("n0")
	for i := range n {
		opts := []NodeOption{WithHandlerName("bench.handler")}
		if i == n-1 {
			opts = append(opts, Terminal())
		} else {
			opts = append(opts, WithNext("n"+strconv.Itoa(i+1)))
		}
		if err := mb.AddNode("n"+strconv.Itoa(i), nodeB, opts...); err != nil {
			b.Fatal(err)
		}
	}
	return mb.Build()
}

func BenchmarkManifestBuilder_Build1000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildChain(b, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGraphManifest_ComputeHash1000(b *testing.B) {
	g, err := buildChain(b, 1000)
	if err != nil {
		b.Fatal(err)
	}
	m := g.Manifest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.ComputeHash(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGraphManifest_ComputeHashSupportAgent(b *testing.B) {
	m := supportAgentManifest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.ComputeHash(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGraphRegistration_ExecuteResolve(b *testing.B) {
	g, err := buildChain(b, 3)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	state := json.RawMessage(`{"name":"bench","count":1,"tags":["x","y"],"note":null,"ignored":true}`)
	b.ReportAllocs()
	for b.Loop() {
		out, err := g.ExecuteNode(ctx, "n0", state)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.ResolveRoute(ctx, "n0", out); err != nil {
			b.Fatal(err)
		}
	}
}

// buildRouteChain is the graph of the bench module's chain: three nodes that append their name
// to the trail, each with a route handler naming the next node.
func buildRouteChain(b *testing.B) GraphRegistration[equivChain] {
	b.Helper()
	nodes := []string{"n0", "n1", "n2"}
	mb := NewManifestBuilder[equivChain]("chain")
	mb.SetEntrypoint(nodes[0])
	for i, node := range nodes {
		err := mb.AddNode(node, func(_ context.Context, s equivChain) (any, error) {
			return Update{"trail": append(s.Trail, node)}, nil
		}, WithHandlerName("bench.chain."+node), WithRoute(func(context.Context, equivChain) (any, error) {
			if i+1 < len(nodes) {
				return Next(nodes[i+1]), nil
			}
			return Complete(""), nil
		}), WithRouteName("bench.chain.route_after_"+node))
		if err != nil {
			b.Fatal(err)
		}
	}
	g, err := mb.Build()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkGraphRegistration_RouteChain is one run of the bench module's chain as the engine
// drives it: CheckState at start, then ExecuteNode and ResolveRoute for each node.
func BenchmarkGraphRegistration_RouteChain(b *testing.B) {
	g := buildRouteChain(b)
	ctx := graphrun.WithStepInfo(context.Background(), StepInfo{RunID: "r", Step: 1, Attempt: 1})
	start := json.RawMessage(`{"seed":12,"trail":[]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.r.CheckState(start); err != nil {
			b.Fatal(err)
		}
		state, node := start, "n0"
		for node != "" {
			out, err := g.ExecuteNode(ctx, node, state)
			if err != nil {
				b.Fatal(err)
			}
			d, err := g.ResolveRoute(ctx, node, out)
			if err != nil {
				b.Fatal(err)
			}
			state, node = out, d.NextNode
		}
	}
}

func BenchmarkStateDecode(b *testing.B) {
	for _, bc := range []struct {
		name  string
		model equivModel
		in    string
	}{
		{"chain", equivModelOf[equivChain](b), `{"seed":12,"trail":["n0","n1"]}`},
		{"model", equivModelOf[modelState](b), `{"source":"s","records":[{"id":1,"name":"a"}],"count":3,"small":7,"result":"ok","flag":true,"extra":{},"any":null,"level":"debug"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := []byte(bc.in)
			ptr := bc.model.newPtr()
			b.ReportAllocs()
			for b.Loop() {
				reflect.ValueOf(ptr).Elem().SetZero()
				if err := bc.model.schema.decode(in, ptr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
