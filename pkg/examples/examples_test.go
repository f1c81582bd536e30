package examples

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// The canonical topology the Python durable package computes for two of its examples
// (parity: docs/lineage.md).
const (
	dataPipelineCanonical = `{"entrypoint":"extract","event_handler_names":[],"graph_name":"data_pipeline","metadata":{"example":true,"profile":"etl"},"nodes":{"extract":{"handler_name":"examples.data_pipeline.graph.extract","name":"extract","next_node":"transform","route_handler_name":null,"terminal":false},"load":{"handler_name":"examples.data_pipeline.graph.load","name":"load","next_node":null,"route_handler_name":null,"terminal":true},"transform":{"handler_name":"examples.data_pipeline.graph.transform","name":"transform","next_node":"load","route_handler_name":null,"terminal":false}},"state_model_name":"PipelineState","version":"0.1.0"}`
	supportAgentCanonical = `{"entrypoint":"classify_request","event_handler_names":["approval"],"graph_name":"support_agent","metadata":{"example":true,"profile":"approval"},"nodes":{"classify_request":{"handler_name":"examples.support_agent.graph.classify_request","name":"classify_request","next_node":null,"route_handler_name":"examples.support_agent.graph.route_after_classify","terminal":false},"draft_reply":{"handler_name":"examples.support_agent.graph.draft_reply","name":"draft_reply","next_node":"finalize_reply","route_handler_name":null,"terminal":false},"finalize_reply":{"handler_name":"examples.support_agent.graph.finalize_reply","name":"finalize_reply","next_node":null,"route_handler_name":null,"terminal":true}},"state_model_name":"SupportState","version":"0.1.0"}`
)

func TestExamples_Hashes_EqualPython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		manifest  durable.GraphManifest
		canonical string
		hash      string
	}{
		{"data_pipeline", MustDataPipeline().Manifest(), dataPipelineCanonical, "6135ea2aa13d431c"},
		{"support_agent", MustSupportAgent().Manifest(), supportAgentCanonical, "af183f226f37e6fc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			canon, err := tt.manifest.CanonicalTopology()
			if err != nil || string(canon) != tt.canonical {
				t.Fatalf("canonical:\n got %s (%v)\nwant %s", canon, err, tt.canonical)
			}
			if tt.manifest.GraphHash != tt.hash {
				t.Fatalf("graph_hash = %s, want %s", tt.manifest.GraphHash, tt.hash)
			}
		})
	}
}

func TestContentClassifier_Manifest_PythonNamesAndStableHash(t *testing.T) {
	t.Parallel()
	m := mustContentClassifier().Manifest()
	again := mustContentClassifier().Manifest()
	if m.GraphHash != again.GraphHash || len(m.GraphHash) != 16 {
		t.Fatalf("hash not stable: %s vs %s", m.GraphHash, again.GraphHash)
	}
	if h, _ := m.ComputeHash(); h != m.GraphHash {
		t.Fatalf("recomputed hash %s, want %s", h, m.GraphHash)
	}
	wantNodes := []durable.NodeDefinition{
		{Name: "classify", HandlerName: "examples.content_classifier.graph.classify", RouteHandlerName: "examples.content_classifier.graph.route_after_classify"},
		{Name: "handle_question", HandlerName: "examples.content_classifier.graph.handle_question", NextNode: "summarize"},
		{Name: "handle_complaint", HandlerName: "examples.content_classifier.graph.handle_complaint", NextNode: "summarize"},
		{Name: "handle_feedback", HandlerName: "examples.content_classifier.graph.handle_feedback", NextNode: "summarize"},
		{Name: "summarize", HandlerName: "examples.content_classifier.graph.summarize", Terminal: true},
	}
	if !slices.Equal(m.Nodes, wantNodes) {
		t.Fatalf("nodes = %+v\nwant %+v", m.Nodes, wantNodes)
	}
	md, _ := json.Marshal(m.Metadata)
	if m.Entrypoint != "classify" || m.StateModelName != "ContentState" || m.Version != "0.1.0" ||
		string(md) != `{"example":true,"profile":"routing"}` || len(m.EventHandlerNames) != 0 {
		t.Fatalf("manifest = %+v", m)
	}
}

func TestAll_FiveGraphs_InOrder(t *testing.T) {
	t.Parallel()
	graphs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	r := durable.NewRegistry()
	for _, g := range graphs {
		names = append(names, g.Manifest().GraphName)
		if err := r.Register(g); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	if strings.Join(names, ",") != "data_pipeline,content_classifier,support_agent,research_agent,reply_writer" {
		t.Fatalf("All() names = %v", names)
	}
	frag, _ := json.Marshal(fragmentOf(r.Public()[2].Manifest()))
	want := `{"graph_name":"support_agent","version":"0.1.0","graph_hash":"af183f226f37e6fc","entrypoint":"classify_request","state_model_name":"SupportState","nodes":["classify_request","draft_reply","finalize_reply"],"events":["approval"]}`
	if string(frag) != want {
		t.Fatalf("fragment = %s, want %s", frag, want)
	}
	// research_agent's hash is pinned: a change of its topology is a new version.
	frag, _ = json.Marshal(fragmentOf(r.Public()[3].Manifest()))
	want = `{"graph_name":"research_agent","version":"0.1.0","graph_hash":"f808bdc33d582085","entrypoint":"plan","state_model_name":"ResearchState","nodes":["plan","search","draft","review","publish","escalate"],"events":["approval"]}`
	if string(frag) != want {
		t.Fatalf("fragment = %s, want %s", frag, want)
	}
}

func TestDataPipeline_Run_ReachesSpecFinalState(t *testing.T) {
	t.Parallel()
	res := runSteps(t, MustDataPipeline(), `{"source_url": "https://example.com/data"}`)
	want := `{"source_url":"https://example.com/data","raw_records":[{"id":1,"name":"  Alice  ","score":"85"},{"id":2,"name":"  Bob  ","score":"92"},{"id":3,"name":"  Carol  ","score":"78"}],"transformed_records":[{"id":1,"name":"Alice","score":85},{"id":2,"name":"Bob","score":92},{"id":3,"name":"Carol","score":78}],"load_result":"Loaded 3 records to https://example.com/data/output","record_count":3}`
	if !res.completed || res.finalNode != "load" || string(res.state) != want {
		t.Fatalf("run = completed %v at %q, state\n %s\nwant\n %s", res.completed, res.finalNode, res.state, want)
	}
	if strings.Join(res.visits, ",") != "extract,transform,load" {
		t.Fatalf("visits = %v", res.visits)
	}
}

func TestDataPipeline_MissingSourceURL_FailsFirstNode(t *testing.T) {
	t.Parallel()
	_, err := MustDataPipeline().ExecuteNode(t.Context(), "extract", json.RawMessage(`{}`))
	if err == nil || err.Error() != "validate state PipelineState: field 'source_url': field required" {
		t.Fatalf("ExecuteNode({}) error = %v", err)
	}
}

func TestContentClassifier_Run_RoutesByCategory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, category, sentiment, response string
	}{
		{"How do I reset my password?", "question", "neutral", questionResponse},
		{"Is it open", "feedback", "neutral", feedbackResponse},
		{"Is it open?", "question", "neutral", questionResponse},
		{"This is terrible, the app is broken", "complaint", "negative", complaintResponse},
		{"However, I love it", "question", "positive", questionResponse},
		{"I hate the worst update", "complaint", "negative", complaintResponse},
		{"Great product, love it", "feedback", "positive", feedbackResponse},
		{"Thanks, nice work", "feedback", "neutral", feedbackResponse},
		{"thanks a lot", "feedback", "positive", feedbackResponse},
		{"It is bad but great", "feedback", "negative", feedbackResponse},
		{"", "feedback", "neutral", feedbackResponse},
	}
	g := mustContentClassifier()
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			in, _ := json.Marshal(map[string]string{"text": tt.text})
			res := runSteps(t, g, string(in))
			var s ContentState
			if err := json.Unmarshal(res.state, &s); err != nil {
				t.Fatal(err)
			}
			summary := "Category: " + tt.category + " | Sentiment: " + tt.sentiment + " | Response: " + tt.response
			if !res.completed || res.finalNode != "summarize" || strings.Join(res.visits, ",") != "classify,handle_"+tt.category+",summarize" {
				t.Fatalf("run completed=%v final=%q visits=%v", res.completed, res.finalNode, res.visits)
			}
			if *s.Category != tt.category || *s.Sentiment != tt.sentiment || *s.Response != tt.response || *s.Summary != summary {
				t.Fatalf("state = %s", res.state)
			}
		})
	}
}

func TestContentClassifier_Route_UnknownCategoryGoesToFeedback(t *testing.T) {
	t.Parallel()
	g := mustContentClassifier()
	for _, state := range []string{`{"text":"x","category":"other"}`, `{"text":"x","category":""}`, `{"text":"x"}`} {
		d, err := g.ResolveRoute(t.Context(), "classify", json.RawMessage(state))
		if err != nil || !reflect.DeepEqual(d, durable.Next("handle_feedback")) {
			t.Errorf("ResolveRoute(%s) = %+v, %v; want next handle_feedback", state, d, err)
		}
	}
}

func TestSupportAgent_Run_FollowsSpecBehaviour(t *testing.T) {
	t.Parallel()
	const (
		refund = `{"user_message": "I need a refund for my invoice"}`
		legal  = `{"user_message": "This is a LEGAL matter"}`
	)
	approved := `{"approved": true, "reviewer": "admin@example.com"}`
	tests := []struct {
		name      string
		input     string
		events    []event
		waits     int
		waiting   string
		wantState string
	}{
		{"refund waits", refund, nil, 1, "approval",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":null,"reviewer":null,"draft_response":null,"final_response":null,"tags":["refund"]}`},
		{"refund approved", refund, []event{{"approval", approved}}, 1, "",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":true,"reviewer":"admin@example.com","draft_response":"` + refundReply + `","final_response":"` + refundReply + ` Reviewer: admin@example.com.","tags":["refund"]}`},
		{"other events stay buffered", refund, []event{{"other", `1`}, {"approval", approved}}, 1, "",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":true,"reviewer":"admin@example.com","draft_response":"` + refundReply + `","final_response":"` + refundReply + ` Reviewer: admin@example.com.","tags":["refund"]}`},
		{"refund rejected with reviewer", refund, []event{{"approval", `{"approved": false, "reviewer": "bob"}`}}, 1, "",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":false,"reviewer":"bob","draft_response":"` + manualReviewReply + `","final_response":"` + manualReviewReply + ` Reviewer: bob.","tags":["refund"]}`},
		{"null payload", refund, []event{{"approval", `null`}}, 1, "",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":false,"reviewer":null,"draft_response":"` + manualReviewReply + `","final_response":"` + manualReviewReply + `","tags":["refund"]}`},
		{"non-object payload", refund, []event{{"approval", `"yes"`}}, 1, "",
			`{"user_message":"I need a refund for my invoice","needs_human":true,"approved":false,"reviewer":null,"draft_response":"` + manualReviewReply + `","final_response":"` + manualReviewReply + `","tags":["refund"]}`},
		{"truthy non-bool approval", legal, []event{{"approval", `{"approved": "ok", "reviewer": ""}`}}, 1, "",
			`{"user_message":"This is a LEGAL matter","needs_human":true,"approved":true,"reviewer":"","draft_response":"` + generalReply + `","final_response":"` + generalReply + `","tags":["general"]}`},
		{"falsy zero approval", legal, []event{{"approval", `{"approved": 0}`}}, 1, "",
			`{"user_message":"This is a LEGAL matter","needs_human":true,"approved":false,"reviewer":null,"draft_response":"` + manualReviewReply + `","final_response":"` + manualReviewReply + `","tags":["general"]}`},
		{"hello there", `{"user_message": "hello there"}`, nil, 0, "",
			`{"user_message":"hello there","needs_human":false,"approved":null,"reviewer":null,"draft_response":"` + generalReply + `","final_response":"` + generalReply + `","tags":["general"]}`},
		{"pre-approved never waits", `{"user_message": "refund please", "approved": true, "tags": ["vip", "refund"]}`, nil, 0, "",
			`{"user_message":"refund please","needs_human":true,"approved":true,"reviewer":null,"draft_response":"` + refundReply + `","final_response":"` + refundReply + `","tags":["refund","vip"]}`},
	}
	g := MustSupportAgent()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runSteps(t, g, tt.input, tt.events...)
			if len(res.waits) != tt.waits || res.waiting != tt.waiting {
				t.Fatalf("waits = %+v, waiting %q; want %d waits, waiting %q", res.waits, res.waiting, tt.waits, tt.waiting)
			}
			for _, w := range res.waits {
				if !reflect.DeepEqual(w, durable.WaitForEvent("approval", "draft_reply").WithNote("awaiting human approval")) {
					t.Fatalf("wait decision = %+v", w)
				}
			}
			if tt.waiting == "" && (!res.completed || res.finalNode != "finalize_reply") {
				t.Fatalf("run completed=%v at %q, want finalize_reply", res.completed, res.finalNode)
			}
			if string(res.state) != tt.wantState {
				t.Fatalf("state\n got %s\nwant %s", res.state, tt.wantState)
			}
		})
	}
}

func TestSupportAgent_BadReviewerType_FailsEvent(t *testing.T) {
	t.Parallel()
	_, err := MustSupportAgent().ApplyEvent(t.Context(), "approval", json.RawMessage(`{"user_message":"x"}`), json.RawMessage(`{"approved":true,"reviewer":5}`))
	if err == nil || err.Error() != "validate state SupportState: field 'reviewer': expected string, got JSON number" {
		t.Fatalf("ApplyEvent error = %v", err)
	}
}

// fragmentOf is the public summary of m the runs API shows (GET /api/graphs, health), fields in
// wire order.
func fragmentOf(m durable.GraphManifest) any {
	return struct {
		GraphName      string   `json:"graph_name"`
		Version        string   `json:"version"`
		GraphHash      string   `json:"graph_hash"`
		Entrypoint     string   `json:"entrypoint"`
		StateModelName string   `json:"state_model_name"`
		Nodes          []string `json:"nodes"`
		Events         []string `json:"events"`
	}{m.GraphName, m.Version, m.GraphHash, m.Entrypoint, m.StateModelName, m.NodeNames(), m.EventHandlerNames}
}
