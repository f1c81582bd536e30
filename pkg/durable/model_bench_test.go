package durable

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
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
