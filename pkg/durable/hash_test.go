package durable

import (
	"testing"
)

// The two vectors, byte for byte.
const (
	vectorDataPipeline = `{"entrypoint":"extract","event_handler_names":[],"graph_name":"data_pipeline","metadata":{"example":true,"profile":"etl"},"nodes":{"extract":{"handler_name":"examples.data_pipeline.graph.extract","name":"extract","next_node":"transform","route_handler_name":null,"terminal":false},"load":{"handler_name":"examples.data_pipeline.graph.load","name":"load","next_node":null,"route_handler_name":null,"terminal":true},"transform":{"handler_name":"examples.data_pipeline.graph.transform","name":"transform","next_node":"load","route_handler_name":null,"terminal":false}},"state_model_name":"PipelineState","version":"0.1.0"}`
	vectorSupportAgent = `{"entrypoint":"classify_request","event_handler_names":["approval"],"graph_name":"support_agent","metadata":{"example":true,"profile":"approval"},"nodes":{"classify_request":{"handler_name":"examples.support_agent.graph.classify_request","name":"classify_request","next_node":null,"route_handler_name":"examples.support_agent.graph.route_after_classify","terminal":false},"draft_reply":{"handler_name":"examples.support_agent.graph.draft_reply","name":"draft_reply","next_node":"finalize_reply","route_handler_name":null,"terminal":false},"finalize_reply":{"handler_name":"examples.support_agent.graph.finalize_reply","name":"finalize_reply","next_node":null,"route_handler_name":null,"terminal":true}},"state_model_name":"SupportState","version":"0.1.0"}`
)

func dataPipelineManifest() GraphManifest {
	return GraphManifest{
		GraphName: "data_pipeline", Version: "0.1.0", StateModelName: "PipelineState", Entrypoint: "extract",
		Nodes: []NodeDefinition{
			{Name: "extract", HandlerName: "examples.data_pipeline.graph.extract", NextNode: "transform"},
			{Name: "transform", HandlerName: "examples.data_pipeline.graph.transform", NextNode: "load"},
			{Name: "load", HandlerName: "examples.data_pipeline.graph.load", Terminal: true},
		},
		EventHandlerNames: []string{},
		Metadata:          map[string]any{"example": true, "profile": "etl"},
	}
}

func supportAgentManifest() GraphManifest {
	return GraphManifest{
		GraphName: "support_agent", Version: "0.1.0", StateModelName: "SupportState", Entrypoint: "classify_request",
		Nodes: []NodeDefinition{
			{Name: "classify_request", HandlerName: "examples.support_agent.graph.classify_request", RouteHandlerName: "examples.support_agent.graph.route_after_classify"},
			{Name: "draft_reply", HandlerName: "examples.support_agent.graph.draft_reply", NextNode: "finalize_reply"},
			{Name: "finalize_reply", HandlerName: "examples.support_agent.graph.finalize_reply", Terminal: true},
		},
		EventHandlerNames: []string{"approval"},
		Metadata:          map[string]any{"example": true, "profile": "approval"},
	}
}

func TestGraphManifest_SpecVectors_ReproduceCanonicalAndHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		manifest  GraphManifest
		canonical string
		size      int
		hash      string
	}{
		{"data_pipeline", dataPipelineManifest(), vectorDataPipeline, 619, "6135ea2aa13d431c"},
		{"support_agent", supportAgentManifest(), vectorSupportAgent, 755, "af183f226f37e6fc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.manifest.CanonicalTopology()
			if err != nil {
				t.Fatalf("CanonicalTopology: %v", err)
			}
			if string(got) != tt.canonical {
				t.Fatalf("canonical:\n got %s\nwant %s", got, tt.canonical)
			}
			if len(got) != tt.size {
				t.Fatalf("canonical length = %d, want %d", len(got), tt.size)
			}
			hash, err := tt.manifest.ComputeHash()
			if err != nil {
				t.Fatalf("ComputeHash: %v", err)
			}
			if hash != tt.hash {
				t.Fatalf("hash = %s, want %s", hash, tt.hash)
			}
		})
	}
}

func TestGraphManifest_ComputeHash_OrderInsensitiveContentSensitive(t *testing.T) {
	t.Parallel()
	base, err := supportAgentManifest().ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(m *GraphManifest)
		same   bool
	}{
		{"node order", func(m *GraphManifest) { m.Nodes[0], m.Nodes[2] = m.Nodes[2], m.Nodes[0] }, true},
		{"event order", func(m *GraphManifest) { m.EventHandlerNames = []string{"approval"} }, true},
		{"stored hash ignored", func(m *GraphManifest) { m.GraphHash = "ffffffffffffffff" }, true},
		{"metadata key order", func(m *GraphManifest) { m.Metadata = map[string]any{"profile": "approval", "example": true} }, true},
		{"version", func(m *GraphManifest) { m.Version = "0.2.0" }, false},
		{"metadata value", func(m *GraphManifest) { m.Metadata["profile"] = "other" }, false},
		{"metadata int vs float", func(m *GraphManifest) { m.Metadata["example"] = 1.0 }, false},
		{"state model name", func(m *GraphManifest) { m.StateModelName = "Other" }, false},
		{"handler name", func(m *GraphManifest) { m.Nodes[1].HandlerName = "x.draft" }, false},
		{"route handler name", func(m *GraphManifest) { m.Nodes[0].RouteHandlerName = "x.route" }, false},
		{"extra event", func(m *GraphManifest) { m.EventHandlerNames = []string{"approval", "other"} }, false},
		{"entrypoint", func(m *GraphManifest) { m.Entrypoint = "draft_reply" }, false},
		{"graph name", func(m *GraphManifest) { m.GraphName = "support" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := supportAgentManifest()
			tt.mutate(&m)
			got, err := m.ComputeHash()
			if err != nil {
				t.Fatal(err)
			}
			if (got == base) != tt.same {
				t.Fatalf("hash %s vs base %s: same=%v, want same=%v", got, base, got == base, tt.same)
			}
		})
	}
}

func TestGraphManifest_NilMetadataAndEvents_HashAsEmpty(t *testing.T) {
	t.Parallel()
	m := dataPipelineManifest()
	m.EventHandlerNames = nil
	want, _ := m.ComputeHash()
	canon, err := m.CanonicalTopology()
	if err != nil || string(canon) != vectorDataPipeline {
		t.Fatalf("nil events: canonical %s (%v)", canon, err)
	}
	m.Metadata = nil
	canon, _ = m.CanonicalTopology()
	m.Metadata = map[string]any{}
	canon2, _ := m.CanonicalTopology()
	if string(canon) != string(canon2) || want == hashCanonical(canon) {
		t.Fatalf("nil metadata %s, empty metadata %s", canon, canon2)
	}
}
