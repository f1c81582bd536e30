package platformruns_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// talkState is the state of talkGraph: its messages have a reducer.
type talkState struct {
	Messages []string `json:"messages"`
	Turns    int      `json:"turns"`
}

// talkGraph appends a message a turn and waits for "more" (whose handler appends the reply)
// until three turns, so its history rows record updates, not states.
func talkGraph(t *testing.T) (*engine.Engine, *platformruns.Assistants) {
	t.Helper()
	b := durable.NewManifestBuilder[talkState]("talk")
	b.SetEntrypoint("say")
	_ = b.AddStep("say", func(_ context.Context, s talkState) (talkState, error) {
		s.Turns++
		s.Messages = append(s.Messages, fmt.Sprint("say ", s.Turns))
		return s, nil
	}, durable.WithDecide(func(_ context.Context, s talkState) (durable.RouteDecision, error) {
		if s.Turns >= 3 {
			return durable.Complete(""), nil
		}
		return durable.WaitForEvent("more", "say"), nil
	}))
	_ = durable.OnEvent(b, "more", func(_ context.Context, s talkState, p string) (talkState, error) {
		s.Messages = append(s.Messages, p)
		return s, nil
	})
	if err := b.Reduce("messages", durable.Append); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return graphAssistants(t, g)
}

// messagesOf decodes a state's messages, failing the test for a value that is no talkState
// (a row's update shown as a state would be one).
func messagesOf(t *testing.T, what string, v json.RawMessage) []string {
	t.Helper()
	var s talkState
	if err := json.Unmarshal(v, &s); err != nil || s.Turns == 0 && len(s.Messages) > 0 {
		t.Fatalf("%s: %s is no state (%v)", what, v, err)
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		t.Fatalf("%s: %s is no state: %v", what, v, err)
	}
	return s.Messages
}

// TestAssistants_ReducerGraph_ShowsWholeStates: for a graph whose rows record what each step
// changed, the thread's state, its history (every checkpoint), and the values a resumed stream
// sends (a follower that starts in the middle of the history) are whole states.
func TestAssistants_ReducerGraph_ShowsWholeStates(t *testing.T) {
	e, a := talkGraph(t)
	ctx := t.Context()
	s, err := a.Run(ctx, platform.DurableRunRequest{ThreadID: "tk", Graph: "talk", Input: json.RawMessage(`{"messages":["hello"]}`)})
	if err != nil || s.Interrupt == nil {
		t.Fatalf("run: %+v %v", s, err)
	}
	if got := messagesOf(t, "state after the start", s.Values); len(got) != 2 || got[1] != "say 1" {
		t.Fatalf("state after the start: %v", got)
	}
	s, err = a.Run(ctx, platform.DurableRunRequest{ThreadID: "tk", Graph: "talk", Resume: json.RawMessage(`"reply 1"`)})
	if err != nil || s.Interrupt == nil {
		t.Fatalf("first resume: %+v %v", s, err)
	}
	var sent []platform.DurableEvent
	s, err = a.RunStream(ctx, platform.DurableRunRequest{ThreadID: "tk", Graph: "talk", Resume: json.RawMessage(`"reply 2"`)},
		func(ev platform.DurableEvent) error { sent = append(sent, ev); return nil })
	if err != nil || s.Interrupt != nil {
		t.Fatalf("streamed resume: %+v %v", s, err)
	}
	want := []string{"hello", "say 1", "reply 1", "say 2", "reply 2", "say 3"}
	if got := messagesOf(t, "final state", s.Values); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("final state %v, want %v", got, want)
	}
	var steps [][]string
	for _, ev := range sent {
		if ev.Kind == platform.DurableStep && ev.Values != nil {
			steps = append(steps, messagesOf(t, "streamed step "+ev.Node, ev.Values))
		}
	}
	if fmt.Sprint(steps) != fmt.Sprint([][]string{want[:5], want}) {
		t.Fatalf("streamed steps %v, want the states after reply 2 and say 3", steps)
	}

	hist, err := a.History(ctx, "tk")
	if err != nil {
		t.Fatal(err)
	}
	var lens []int
	for _, h := range hist {
		lens = append(lens, len(messagesOf(t, "checkpoint "+h.ID, h.Values)))
	}
	if fmt.Sprint(lens) != "[6 5 4 3 2]" { // newest first: say, more, say, more, say
		t.Fatalf("history checkpoints of %v messages, want [6 5 4 3 2]", lens)
	}

	rows, err := e.History(ctx, platformruns.InstanceID("tk"), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, h := range rows.Events {
		if h.Type == engine.HistoryNodeCompleted && bytes.Contains(h.Data, []byte(`"update":`)) {
			updates++
		}
	}
	if updates != 3 {
		t.Fatalf("%d node_completed rows record updates, want 3: the test shows nothing", updates)
	}
}
