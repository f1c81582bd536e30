package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// chatMsg is a message of chatState.
type chatMsg struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// chatState is the state of foldGraph: a conversation whose messages and tags have reducers.
type chatState struct {
	Messages []chatMsg        `json:"messages"`
	Turn     int              `json:"turn"`
	Tags     map[string]int   `json:"tags"`
	Sub      *json.RawMessage `json:"sub"`
	Draft    string           `json:"draft"` // last: set on odd turns, cleared on even ones (dropRemoved drops it)
}

// foldGraph builds a graph whose steps change the state in every way a history row records:
// "say" appends a message (turns 1–4, setting and dropping draft), "edit" replaces the last
// message by id, a fan-out's branches append messages and set tags, an event handler appends
// the reply, a child run's final state goes into sub, and "rewrite" replaces the list.
func foldGraph(t testing.TB, name, child string) durable.GraphRegistration[chatState] {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	b := durable.NewManifestBuilder[chatState](name)
	b.SetEntrypoint("say")
	must(b.AddStep("say", func(_ context.Context, s chatState) (chatState, error) {
		s.Turn++
		s.Messages = append(s.Messages, chatMsg{ID: fmt.Sprintf("m%d", s.Turn), Text: strings.Repeat("x", 40)})
		s.Draft = ""
		if s.Turn%2 == 1 {
			s.Draft = "thinking"
		}
		return s, nil
	}, durable.WithHandlerName("test.fold.say"), durable.WithRoute(func(_ context.Context, s chatState) (any, error) {
		if s.Turn < 4 {
			return "say", nil
		}
		return "edit", nil
	}), durable.WithRouteName("test.fold.route")))
	must(b.AddStep("edit", func(_ context.Context, s chatState) (chatState, error) {
		s.Messages[len(s.Messages)-1] = chatMsg{ID: s.Messages[len(s.Messages)-1].ID, Text: "edited"}
		return s, nil
	}, durable.WithHandlerName("test.fold.edit"), durable.WithRoute(func(context.Context, chatState) (any, error) {
		return durable.Map("ask", "branch", []int{1, 2}), nil
	}), durable.WithRouteName("test.fold.fan")))
	must(b.AddStep("branch", func(ctx context.Context, s chatState) (chatState, error) {
		item, err := durable.BranchItem[int](ctx)
		if err != nil {
			return s, err
		}
		s.Messages = append(slices.Clone(s.Messages), chatMsg{ID: fmt.Sprintf("b%d", item), Text: "branch"})
		tags := map[string]int{}
		for k, v := range s.Tags {
			tags[k] = v
		}
		tags[fmt.Sprintf("t%d", item)] = item
		s.Tags = tags
		return s, nil
	}, durable.WithHandlerName("test.fold.branch"), durable.WithNext("ask")))
	must(b.AddNode("ask", func(context.Context, chatState) (any, error) { return nil, nil }, durable.WithHandlerName("test.fold.ask"),
		durable.WithRoute(func(context.Context, chatState) (any, error) { return durable.WaitForEvent("reply", "spawn"), nil }),
		durable.WithRouteName("test.fold.wait")))
	must(b.AddEventHandler("reply", func(_ context.Context, s chatState, p json.RawMessage) (any, error) {
		var text string
		if err := json.Unmarshal(p, &text); err != nil {
			return nil, err
		}
		return durable.Update{"messages": append(s.Messages, chatMsg{ID: "reply", Text: text})}, nil
	}))
	must(b.AddNode("spawn", func(context.Context, chatState) (any, error) { return nil, nil }, durable.WithHandlerName("test.fold.spawn"),
		durable.WithRoute(func(context.Context, chatState) (any, error) {
			return durable.StartChild(child, map[string]any{"limit": 1}, "rewrite").Into("sub"), nil
		}), durable.WithRouteName("test.fold.child")))
	must(b.AddStep("rewrite", func(_ context.Context, s chatState) (chatState, error) {
		s.Messages = []chatMsg{{ID: "summary", Text: fmt.Sprintf("%d messages", len(s.Messages))}}
		return s, nil
	}, durable.WithHandlerName("test.fold.rewrite"), durable.Terminal()))
	must(b.Reduce("messages", durable.Append))
	must(b.Reduce("tags", durable.MergeKeys))
	g, err := b.Build()
	must(err)
	return g
}

// headState reads the state r's head of run id stores (from the payload store when spilled).
func headState(t testing.TB, r *rig, id string) json.RawMessage {
	t.Helper()
	ent, err := r.store.Get(context.Background(), id, "r")
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := ent.Properties["StateRef"].(string); ref != "" {
		b, err := r.payloads.Get(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s, _ := ent.Properties["State"].(string)
	return json.RawMessage(s)
}

// foldedState is the state FoldStates rebuilds from the whole history of run id.
func foldedState(t testing.TB, r *rig, id string) json.RawMessage {
	t.Helper()
	states, err := engine.FoldStates(r.history(t, id))
	if err != nil {
		t.Fatal(err)
	}
	return states[len(states)-1]
}

// TestFoldState_RebuildsTheHeadsStateAfterEveryStep drives a reducer graph one work item at a
// time and checks, after each, that the state folded from the history is the head's, byte for
// byte; and that its rows record updates, not the state: an append adds only the new message,
// an edit of the last message keeps all but it, a rewrite keeps none, a cleared field is set.
// (A typed state dumps every field, so no step of it removes one: a removed field's record and
// its fold are TestStateRows_Update's.)
func TestFoldState_RebuildsTheHeadsStateAfterEveryStep(t *testing.T) {
	child := chainGraph(t, "fold-child", 1, nil)
	r := newRig(t, engine.Options{}, false, foldGraph(t, "fold-chat", "fold-child"), child)
	id := r.start(t, "fold-chat", "fold-1", `{"messages":[{"id":"m0","text":"hello"}]}`)
	check := func(when string) {
		t.Helper()
		if got, want := foldedState(t, r, id), headState(t, r, id); !bytes.Equal(got, want) {
			t.Fatalf("%s: folded state\n%s\nhead's state\n%s", when, got, want)
		}
	}
	check("after the start")
	steps := 0
	for range 200 {
		msgs, err := r.fqueue.Receive(context.Background(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			if run, _ := r.e.GetRun(context.Background(), id); run.RuntimeStatus == engine.StatusRunning && steps < 100 {
				if err := r.e.RaiseEvent(context.Background(), id, "reply", json.RawMessage(`"hi back"`)); err != nil {
					t.Fatal(err)
				}
				steps = 100
				continue
			}
			break
		}
		if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
			t.Fatal(err)
		}
		if err := r.fqueue.Delete(context.Background(), msgs[0]); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after work item %d", steps))
		steps++
	}
	run, err := r.e.GetRun(context.Background(), id)
	if err != nil || run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run %s %s, %v", run.RuntimeStatus, run.Output, err)
	}
	var out struct {
		State json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil || !bytes.Equal(out.State, foldedState(t, r, id)) {
		t.Fatalf("output state %s, folded %s (%v)", out.State, foldedState(t, r, id), err)
	}
	var datas []string
	for _, ev := range r.history(t, id) {
		switch ev.Type {
		case engine.HistoryNodeCompleted, engine.HistoryEventApplied, engine.HistoryBranchesJoined, engine.HistoryChildCompleted, engine.HistoryRunCompleted:
			if bytes.Contains(ev.Data, []byte(`"state":`)) {
				t.Errorf("row %d %s carries the state: %s", ev.Sequence, ev.Type, ev.Data)
			}
			datas = append(datas, ev.Type+" "+string(ev.Data))
		}
	}
	all := strings.Join(datas, "\n")
	for _, want := range []string{
		`node_completed {"update":{"messages":{"keep":1,"add":[{"id":"m1","text":"` + strings.Repeat("x", 40) + `"}]},"turn":{"set":1},"tags":{"set":{}},"sub":{"set":null},"draft":{"set":"thinking"}}}`,
		`"draft":{"set":""}`,
		`node_completed {"update":{"messages":{"keep":4,"add":[{"id":"m4","text":"edited"}]}}}`,
		`branches_joined {"join_node":"ask","count":2,"update":{"messages":{"keep":5,"add":[{"id":"b1","text":"branch"},{"id":"b2","text":"branch"}]},"tags":{"set":{"t1":1,"t2":2}}}}`,
		`event_applied {"event_name":"reply","inbox_seq":1,"update":{"messages":{"keep":7,"add":[{"id":"reply","text":"hi back"}]}}}`,
		`"into":"sub","update":{"sub":{"set":{"n":1,"limit":1,"pad":""}}}}`,
		`node_completed {"update":{"messages":{"keep":0,"add":[{"id":"summary","text":"8 messages"}]}}}`,
		`run_completed {"graph_name":"fold-chat"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no row holds %s; rows:\n%s", want, all)
		}
	}
}

// TestFoldState_GraphWithoutReducersKeepsWholeStates: a graph that declares no reducer writes
// its rows as it always has — every row that ends a step carries the whole state, none an
// update, and run_completed the run's output byte for byte — and the fold reads them.
func TestFoldState_GraphWithoutReducersKeepsWholeStates(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "plain", 3, nil))
	id := r.start(t, "plain", "", `{"n":0}`)
	r.drive(t)
	run, err := r.e.GetRun(context.Background(), id)
	if err != nil || run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run %s, %v", run.RuntimeStatus, err)
	}
	rows := r.history(t, id)
	n := 0
	for _, ev := range rows {
		switch ev.Type {
		case engine.HistoryNodeCompleted:
			n++
			if want := fmt.Sprintf(`{"state":{"n":%d,"limit":0,"pad":""}}`, n); string(ev.Data) != want {
				t.Errorf("row %d: %s, want %s", ev.Sequence, ev.Data, want)
			}
		case engine.HistoryRunCompleted:
			if !bytes.Equal(ev.Data, run.Output) {
				t.Errorf("run_completed %s, output %s", ev.Data, run.Output)
			}
		}
		if bytes.Contains(ev.Data, []byte(`"update":`)) {
			t.Errorf("row %d %s records an update: %s", ev.Sequence, ev.Type, ev.Data)
		}
	}
	if got, want := foldedState(t, r, id), headState(t, r, id); n != 3 || !bytes.Equal(got, want) {
		t.Fatalf("%d node rows; folded %s, head %s", n, got, want)
	}
}

// TestFoldState_LargeUpdatesSpill: an update past the inline limit goes to the payload store
// as a large state does, and the fold reads it back.
func TestFoldState_LargeUpdatesSpill(t *testing.T) {
	t.Parallel()
	g := bigMessagesGraph(t, "fold-big", 3000, 4)
	r := newRig(t, engine.Options{InlineLimit: 1024}, false, g)
	id := r.start(t, "fold-big", "", `{"messages":[]}`)
	r.counts.Reset()
	r.drive(t)
	// Each of the 4 steps spills its state (the head) and its update (the row).
	if puts := r.counts.PayloadPuts.Load(); puts < 8 {
		t.Fatalf("%d payloads stored for 4 steps of 3 KB updates, want a state and an update each", puts)
	}
	updates := 0
	for _, ev := range r.history(t, id) {
		if ev.Type == engine.HistoryNodeCompleted && bytes.Contains(ev.Data, []byte(`"update":{"messages":{"keep":`)) {
			updates++
		}
	}
	if got, want := foldedState(t, r, id), headState(t, r, id); updates != 4 || !bytes.Equal(got, want) {
		t.Fatalf("%d update rows; folded %.200s, head %.200s", updates, got, want)
	}
}

// bigMessagesGraph builds a graph that appends a message of size bytes to its messages (with
// the Append reducer) at each of turns visits of its one node, then completes.
func bigMessagesGraph(t testing.TB, name string, size, turns int) durable.GraphRegistration[chatState] {
	t.Helper()
	b := durable.NewManifestBuilder[chatState](name)
	b.SetEntrypoint("say")
	if err := b.AddStep("say", func(_ context.Context, s chatState) (chatState, error) {
		s.Turn++
		s.Messages = append(s.Messages, chatMsg{ID: fmt.Sprint(s.Turn), Text: strings.Repeat("y", size)})
		return s, nil
	}, durable.WithHandlerName("test."+name+".say"), durable.WithRoute(func(_ context.Context, s chatState) (any, error) {
		if s.Turn < turns {
			return "say", nil
		}
		return durable.Complete(""), nil
	}), durable.WithRouteName("test."+name+".route")); err != nil {
		t.Fatal(err)
	}
	if err := b.Reduce("messages", durable.Append); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
