package examples

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkDataPipeline_ExecuteNodeTransform runs the transform node on the state extract
// produced: decode and validate, handler, merge, dump.
func BenchmarkDataPipeline_ExecuteNodeTransform(b *testing.B) {
	g := MustDataPipeline()
	ctx := context.Background()
	state, err := g.ExecuteNode(ctx, "extract", json.RawMessage(`{"source_url":"https://example.com/data"}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.ExecuteNode(ctx, "transform", state); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDataPipeline_FullRun runs all three visits with their routes.
func BenchmarkDataPipeline_FullRun(b *testing.B) {
	g := MustDataPipeline()
	ctx := context.Background()
	input := json.RawMessage(`{"source_url":"https://example.com/data"}`)
	b.ReportAllocs()
	for b.Loop() {
		state := input
		for _, node := range []string{"extract", "transform", "load"} {
			var err error
			if state, err = g.ExecuteNode(ctx, node, state); err != nil {
				b.Fatal(err)
			}
			if _, err := g.ResolveRoute(ctx, node, state); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSupportAgent_ResolveRouteClassify runs the route handler, which decodes the state.
func BenchmarkSupportAgent_ResolveRouteClassify(b *testing.B) {
	g := MustSupportAgent()
	ctx := context.Background()
	state := json.RawMessage(`{"user_message":"I need a refund","needs_human":true,"approved":null,"reviewer":null,"draft_response":null,"final_response":null,"tags":["refund"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.ResolveRoute(ctx, "classify_request", state); err != nil {
			b.Fatal(err)
		}
	}
}
