package durabletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Chat is the state of chatGraph: a conversation of 1 KB messages.
type Chat struct {
	Messages []string `json:"messages"`
	Turns    int      `json:"turns"`
	Limit    int      `json:"limit"`
	Draft    string   `json:"draft"` // set on odd turns, cleared on even ones
}

// chatGraph appends one 1 KB message per turn (its messages have the Append reducer) and
// waits for the next turn's event, until limit turns; the event handler sets draft on odd
// turns, and the next say clears it.
func chatGraph(t testing.TB) durable.GraphRegistration[Chat] {
	t.Helper()
	b := durable.NewManifestBuilder[Chat]("chat")
	b.SetEntrypoint("say")
	err := b.AddStep("say", func(_ context.Context, s Chat) (Chat, error) {
		s.Turns++
		s.Messages = append(s.Messages, fmt.Sprintf("%04d", s.Turns)+strings.Repeat("m", 1020))
		s.Draft = ""
		return s, nil
	}, durable.WithHandlerName("test.chat.say"), durable.WithRoute(func(_ context.Context, s Chat) (any, error) {
		if s.Turns >= s.Limit {
			return durable.Complete(""), nil
		}
		return durable.WaitForEvent("turn", "say"), nil
	}), durable.WithRouteName("test.chat.route"))
	if err == nil {
		err = b.AddEventHandler("turn", func(_ context.Context, s Chat, _ json.RawMessage) (any, error) {
			if s.Turns%2 == 1 {
				return durable.Update{"draft": "typing"}, nil
			}
			return nil, nil
		})
	}
	if err == nil {
		err = b.Reduce("messages", durable.Append)
	}
	g, berr := b.Build()
	if err != nil || berr != nil {
		t.Fatal(err, berr)
	}
	return g
}

// historySize runs a chat of turns turns on kit and returns its history's bytes (the rows'
// data), the bytes the rows would hold if each recorded the whole state, and the final
// state's bytes.
func historySize(t testing.TB, kit *durabletest.Kit[Chat], id string, turns int) (history, whole, final int) {
	t.Helper()
	kit.Start(id, Chat{Limit: turns})
	for range turns - 1 {
		kit.Send(id, "turn", struct{}{})
	}
	if r := kit.Run(id); r.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("run %s: %s", id, r.RuntimeStatus)
	}
	var state json.RawMessage
	for _, h := range kit.History(id) {
		history += len(h.Data)
		var err error
		if state, _, err = engine.FoldState(state, h); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Update json.RawMessage `json:"update"`
		}
		if json.Unmarshal(h.Data, &d) != nil || d.Update == nil {
			whole += len(h.Data)
			continue
		}
		whole += len(h.Data) - len(d.Update) + len(state) - 1 // "update" → "state"
	}
	return history, whole, len(state)
}

// TestKit_History_GrowsWithWhatTheTurnsAdd: a 50-turn chat whose messages have a reducer
// stores at most twice its final state in history, not the square of its length.
func TestKit_History_GrowsWithWhatTheTurnsAdd(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, chatGraph(t), durabletest.Options{})
	history, whole, final := historySize(t, kit, "c50", 50)
	t.Logf("50 turns: history %d bytes, whole states %d, final state %d", history, whole, final)
	if history > 2*final {
		t.Fatalf("50 turns: history %d bytes for a final state of %d, more than twice", history, final)
	}
	if whole < 10*final {
		t.Fatalf("50 turns: whole states %d bytes for a final state of %d: the comparison measures nothing", whole, final)
	}
}

// TestKit_State_FoldsTheHistoryOfAReducerGraph: State and StateAfter show whole states of a
// graph whose rows record updates — while it waits, after each turn and each event, and once it finished (the engine's output).
func TestKit_State_FoldsTheHistoryOfAReducerGraph(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, chatGraph(t), durabletest.Options{})
	kit.Start("c", Chat{Limit: 4})
	for turn := 1; turn <= 4; turn++ {
		got := kit.State("c")
		if got.Turns != turn || len(got.Messages) != turn || !strings.HasPrefix(got.Messages[turn-1], fmt.Sprintf("%04d", turn)) || got.Draft != "" {
			t.Fatalf("turn %d: state %d turns, %d messages, draft %q", turn, got.Turns, len(got.Messages), got.Draft)
		}
		if turn < 4 {
			kit.Send("c", "turn", struct{}{})
		}
	}
	if got, want := kit.State("c"), kit.Final("c"); !reflect.DeepEqual(got, want) {
		t.Fatalf("state %+v, final %+v", got, want)
	}
	drafts := 0
	for _, h := range kit.History("c") {
		if h.Type == durabletest.HistoryEventApplied && kit.StateAfter("c", h.Sequence).Draft == "typing" {
			drafts++
		}
	}
	if drafts != 2 { // turns 1 and 3
		t.Fatalf("%d event_applied rows left a draft, want 2", drafts)
	}
}

// BenchmarkKit_History_ChatTurns measures the history of a chat appending one 1 KB message a
// turn: its bytes per byte of final state (history/state), beside what rows recording the
// whole state would hold (whole/state).
func BenchmarkKit_History_ChatTurns(b *testing.B) {
	for _, turns := range []int{10, 100, 200} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			kit := durabletest.New(b, chatGraph(b), durabletest.Options{})
			var history, whole, final int
			for i := 0; b.Loop(); i++ {
				history, whole, final = historySize(b, kit, fmt.Sprint("c-", i), turns)
			}
			b.ReportMetric(float64(history)/float64(final), "history/state")
			b.ReportMetric(float64(whole)/float64(final), "whole/state")
			b.ReportMetric(float64(history), "history-bytes")
			b.ReportMetric(float64(final), "state-bytes")
		})
	}
}
