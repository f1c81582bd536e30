package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

const pipelineFinal = `{"graph_name":"data_pipeline","graph_version":"0.1.0","graph_hash":"6135ea2aa13d431c","final_node":"load","state":{"source_url":"https://example.com/data","raw_records":[{"id":1,"name":"  Alice  ","score":"85"},{"id":2,"name":"  Bob  ","score":"92"},{"id":3,"name":"  Carol  ","score":"78"}],"transformed_records":[{"id":1,"name":"Alice","score":85},{"id":2,"name":"Bob","score":92},{"id":3,"name":"Carol","score":78}],"load_result":"Loaded 3 records to https://example.com/data/output","record_count":3}}`

const supportWaiting = `{"graph_name":"support_agent","graph_version":"0.1.0","graph_hash":"af183f226f37e6fc","current_node":"classify_request","waiting_for_event":"approval","resume_node":"draft_reply"}`

func TestEngine_DataPipeline_CompletesWithSpecOutput(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "data_pipeline", "", `{"source_url": "https://example.com/data"}`)
	run := r.wait(t, id)
	if run.RuntimeStatus != engine.StatusCompleted || string(run.Output) != pipelineFinal {
		t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
	}
	wantCustom := `{"graph_name":"data_pipeline","graph_version":"0.1.0","graph_hash":"6135ea2aa13d431c","current_node":"load"}`
	if string(run.CustomStatus) != wantCustom {
		t.Errorf("custom_status = %s, want %s", run.CustomStatus, wantCustom)
	}
	if run.Input.GraphHash != "6135ea2aa13d431c" || string(run.Input.InitialState) != `{"source_url":"https://example.com/data"}` ||
		string(run.Input.Metadata) != "{}" || run.Input.CurrentNode != nil {
		t.Errorf("input = %+v", run.Input)
	}
	got := strings.Join(checkHistory(t, r.history(t, id)), " ")
	want := "run_started:extract node_completed:extract route_resolved:extract node_completed:transform route_resolved:transform " +
		"node_completed:load route_resolved:load run_completed:load"
	if got != want {
		t.Errorf("history = %s\nwant %s", got, want)
	}
}

func TestEngine_ContentClassifier_RoutesByCategory(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	tests := []struct{ text, category, sentiment, handler string }{
		{"How do I reset my password?", "question", "neutral", "handle_question"},
		{"This product is broken and terrible", "complaint", "negative", "handle_complaint"},
		{"I love it, great work", "feedback", "positive", "handle_feedback"},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"text": tt.text})
		id := r.start(t, "content_classifier", "", string(in))
		run := r.wait(t, id)
		s := stateOf(t, run)
		if run.RuntimeStatus != engine.StatusCompleted || s["category"] != tt.category || s["sentiment"] != tt.sentiment {
			t.Errorf("%q: status %s state %v", tt.text, run.RuntimeStatus, s)
		}
		nodes := checkHistory(t, r.history(t, id))
		if !strings.Contains(strings.Join(nodes, " "), "node_completed:"+tt.handler) {
			t.Errorf("%q: history %v lacks %s", tt.text, nodes, tt.handler)
		}
	}
}

func TestEngine_SupportAgent_FollowsSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		message   string
		events    [][2]string // name, payload, raised after the run waits
		early     [][2]string // raised right after the start, before the run ran
		wantFinal string
		wantWait  bool
	}{
		{name: "approved", message: "I need a refund", events: [][2]string{{"approval", `{"approved": true, "reviewer": "admin@example.com"}`}},
			wantFinal: "We have queued your refund review. A team member will validate the invoice and confirm next steps. Reviewer: admin@example.com."},
		{name: "rejected", message: "legal question", events: [][2]string{{"approval", `{"approved": false}`}},
			wantFinal: "Your request requires manual review before we can proceed."},
		{name: "null payload", message: "refund please", events: [][2]string{{"approval", `null`}},
			wantFinal: "Your request requires manual review before we can proceed."},
		{name: "no human", message: "hello there", wantFinal: "Thanks for reaching out. We have prepared a response for your request."},
		{name: "event before wait", message: "refund now", early: [][2]string{{"approval", `{"approved": true, "reviewer": "early"}`}},
			wantFinal: "We have queued your refund review. A team member will validate the invoice and confirm next steps. Reviewer: early."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false)
			in, _ := json.Marshal(map[string]string{"user_message": tt.message})
			id := r.start(t, "support_agent", "", string(in))
			if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusPending || string(run.CustomStatus) != "null" {
				t.Fatalf("before the first visit: %s custom %s", run.RuntimeStatus, run.CustomStatus)
			}
			for _, ev := range tt.early {
				if err := r.e.RaiseEvent(t.Context(), id, ev[0], json.RawMessage(ev[1])); err != nil {
					t.Fatal(err)
				}
			}
			r.drive(t)
			for _, ev := range tt.events {
				run, _ := r.e.GetRun(t.Context(), id)
				if string(run.CustomStatus) != supportWaiting || run.RuntimeStatus != engine.StatusRunning {
					t.Fatalf("before event: %s custom %s, want waiting", run.RuntimeStatus, run.CustomStatus)
				}
				if err := r.e.RaiseEvent(t.Context(), id, ev[0], json.RawMessage(ev[1])); err != nil {
					t.Fatal(err)
				}
				r.drive(t)
			}
			run, err := r.e.GetRun(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantWait {
				if run.RuntimeStatus != engine.StatusRunning || string(run.CustomStatus) != supportWaiting {
					t.Fatalf("status %s custom %s, want still waiting", run.RuntimeStatus, run.CustomStatus)
				}
				// The right name still completes it; the other events stay in the inbox.
				if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true}`)); err != nil {
					t.Fatal(err)
				}
				r.drive(t)
				run, _ = r.e.GetRun(t.Context(), id)
				if run.RuntimeStatus != engine.StatusCompleted {
					t.Fatalf("after the right event: %s", run.RuntimeStatus)
				}
				return
			}
			if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["final_response"] != tt.wantFinal {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
		})
	}
}

func TestEngine_CancelWhileWaiting_TerminatesWithReason(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.wait(t, id)
	if err := r.e.CancelRun(t.Context(), id, "customer withdrew"); err != nil {
		t.Fatal(err)
	}
	run := r.wait(t, id)
	if run.RuntimeStatus != engine.StatusTerminated || outputString(t, run) != "customer withdrew" || string(run.CustomStatus) != supportWaiting {
		t.Fatalf("status %s output %s custom %s", run.RuntimeStatus, run.Output, run.CustomStatus)
	}
	var finished *engine.RunFinishedError
	if err := r.e.RaiseEvent(t.Context(), id, "approval", nil); !errors.As(err, &finished) || finished.Status != engine.StatusTerminated {
		t.Errorf("event on a terminated run: %v", err)
	}
	if err := r.e.CancelRun(t.Context(), id, "again"); !errors.As(err, &finished) {
		t.Errorf("cancel of a terminated run: %v", err)
	}
	rows := checkHistory(t, r.history(t, id))
	if rows[len(rows)-1] != "run_terminated:classify_request" {
		t.Errorf("last history row %s", rows[len(rows)-1])
	}
}

func TestEngine_FinishedRun_RejectsEventAndCancel(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "data_pipeline", "", `{"source_url":"x"}`)
	r.wait(t, id)
	for name, err := range map[string]error{
		"event":  r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{}`)),
		"cancel": r.e.CancelRun(t.Context(), id, "late"),
	} {
		var finished *engine.RunFinishedError
		if !errors.As(err, &finished) || finished.Status != engine.StatusCompleted || finished.InstanceID != id {
			t.Errorf("%s on a completed run: %v", name, err)
		}
	}
}

func TestEngine_UnknownRun_NotFound(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	ctx := t.Context()
	_, getErr := r.e.GetRun(ctx, "nope")
	_, histErr := r.e.History(ctx, "nope", "", 0)
	_, badErr := r.e.GetRun(ctx, "bad/id")
	for name, err := range map[string]error{
		"get": getErr, "event": r.e.RaiseEvent(ctx, "nope", "e", nil), "cancel": r.e.CancelRun(ctx, "nope", "r"),
		"history": histErr, "purge": r.e.PurgeRun(ctx, "nope"), "bad id": badErr,
	} {
		if !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("%s: err = %v, want ErrRunNotFound", name, err)
		}
	}
}

func TestEngine_MaxSteps_FailsWithSpecMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   engine.Options
		limit  int
		status engine.RunStatus
		output string
	}{
		{"engine default bound", engine.Options{MaxSteps: 5}, 0, engine.StatusFailed,
			"orchestrator failed: max steps exceeded: graph 'looper' made 5 node visits without completing"},
		{"graph policy bound", engine.Options{Policies: map[string]engine.GraphPolicy{"looper": {MaxSteps: 3}}}, 0, engine.StatusFailed,
			"orchestrator failed: max steps exceeded: graph 'looper' made 3 node visits without completing"},
		{"self-loop within bound", engine.Options{MaxSteps: 5}, 4, engine.StatusCompleted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.opts, true, loopGraph(t, "looper"))
			in, _ := json.Marshal(map[string]int{"limit": tt.limit})
			run := r.wait(t, r.start(t, "looper", "", string(in)))
			if run.RuntimeStatus != tt.status {
				t.Fatalf("status %s output %s", run.RuntimeStatus, run.Output)
			}
			if tt.output != "" && outputString(t, run) != tt.output {
				t.Errorf("output %s, want %q", run.Output, tt.output)
			}
		})
	}
}

// TestEngine_InvalidInitialState_RejectedAtStartNothingStored: a product rule:
// a missing required field, a wrong type or a failed Validate is refused at start
// with every problem listed, and nothing is stored or queued.
func TestEngine_InvalidInitialState_RejectedAtStartNothingStored(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	tests := []struct {
		input string
		want  []durable.StateIssue
	}{
		{``, []durable.StateIssue{{Field: "source_url", Msg: "field required"}}},
		{`{"source_url":7,"record_count":"x"}`, []durable.StateIssue{
			{Field: "source_url", Msg: "expected string, got JSON number"},
			{Field: "record_count", Msg: "expected an integer, got \"x\""}}},
	}
	for _, tt := range tests {
		_, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "bad", Input: json.RawMessage(tt.input)})
		var se *durable.StateErrors
		if !errors.As(err, &se) || !errors.Is(err, durable.ErrInvalidState) {
			t.Fatalf("input %s: err = %v, want *durable.StateErrors", tt.input, err)
		}
		if fmt.Sprint(se.Issues) != fmt.Sprint(tt.want) {
			t.Errorf("input %s: issues %v, want %v", tt.input, se.Issues, tt.want)
		}
	}
	if n := r.store.Len(); n != 0 {
		t.Errorf("%d rows stored for refused starts", n)
	}
	if n := r.queue.Len(); n != 0 {
		t.Errorf("%d work items queued for refused starts", n)
	}
}

func TestEngine_StartRun_Semantics(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "free", 1, nil))
	ctx := t.Context()
	if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "nope"}); !errors.Is(err, durable.ErrUnknownGraph) || err.Error() != "unknown graph 'nope'" {
		t.Errorf("unknown graph: %v", err)
	}
	for _, id := range []string{"a/b", `a\b`, "a#b", "a?b", "tab\there", strings.Repeat("x", 257), "é", ".", ".."} {
		if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id}); !errors.Is(err, engine.ErrInvalidInstanceID) {
			t.Errorf("instance id %q: %v", id, err)
		}
	}
	for _, in := range []string{`null`, `false`, `0`, `""`, `[]`, `{}`, ` `} {
		run, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "free", Input: json.RawMessage(in), Metadata: json.RawMessage(in)})
		if err != nil {
			t.Fatalf("falsy input %q: %v", in, err)
		}
		got, _ := r.e.GetRun(ctx, run.InstanceID)
		if string(got.Input.InitialState) != "{}" || string(got.Input.Metadata) != "{}" || len(run.InstanceID) != 36 {
			t.Errorf("falsy %q: input %s metadata %s id %q", in, got.Input.InitialState, got.Input.Metadata, run.InstanceID)
		}
	}
	for _, in := range []string{`[1]`, `"x"`, `1`, `true`} {
		if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", Input: json.RawMessage(in)}); !errors.Is(err, engine.ErrInvalidRunInput) {
			t.Errorf("truthy non-object %s: %v", in, err)
		}
	}

	id := strings.Repeat("k", 256)
	r.start(t, "support_agent", id, `{"user_message":"refund"}`)
	r.drive(t)
	var exists *engine.RunExistsError
	if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: id, Input: json.RawMessage(`{"source_url":"u"}`)}); !errors.As(err, &exists) || exists.Status != engine.StatusRunning {
		t.Fatalf("start over a waiting run: %v", err)
	}
	if err := r.e.RaiseEvent(ctx, id, "approval", json.RawMessage(`{"approved": false}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.e.CancelRun(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	r.start(t, "data_pipeline", id, `{"source_url":"u"}`)
	r.drive(t)
	run, _ := r.e.GetRun(ctx, id)
	if run.RuntimeStatus != engine.StatusCompleted || run.GraphName != "data_pipeline" {
		t.Fatalf("replacement: %s %s", run.RuntimeStatus, run.GraphName)
	}
	rows := checkHistory(t, r.history(t, id))
	if rows[0] != "run_started:extract" || len(rows) != 8 {
		t.Errorf("history of the replacement still holds the old run: %v", rows)
	}
	// Only the new run's rows remain in the partition (head + 8 history rows + its start's
	// claim row).
	page, err := r.store.Query(ctx, engine.Query{PartitionKey: id})
	if err != nil || len(page.Entities) != 10 {
		t.Errorf("partition holds %d rows (err %v), want 10", len(page.Entities), err)
	}
}

func regOf(t *testing.T, gs ...durable.Graph) *durable.Registry {
	t.Helper()
	reg := durable.NewRegistry()
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}
