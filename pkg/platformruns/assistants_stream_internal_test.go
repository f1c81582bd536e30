package platformruns

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// Records and rows of a run whose node "reply" (step 2) previewed the event "noted".
func preview(writer string, data string) engine.LiveRecord {
	return engine.LiveRecord{Kind: engine.LiveCustom, Writer: writer, Step: 2, Attempt: 1, Node: "reply", Branch: -1, Name: "noted", Data: json.RawMessage(data)}
}

func chunk(writer, node, data string) engine.LiveRecord {
	return engine.LiveRecord{Kind: engine.LiveChunk, Writer: writer, Step: 2, Attempt: 1, Node: node, Branch: -1, Name: "messages", Data: json.RawMessage(data)}
}

func end(kind, writer string) engine.LiveRecord {
	return engine.LiveRecord{Kind: kind, Writer: writer, Step: 2, Branch: -1}
}

func customRow(data string) engine.HistoryEvent {
	return engine.HistoryEvent{Type: engine.HistoryCustom, Node: "reply", Data: json.RawMessage(`{"name":"noted","data":` + data + `}`)}
}

func completed(node string) engine.HistoryEvent {
	return engine.HistoryEvent{Type: engine.HistoryNodeCompleted, Node: node, Data: json.RawMessage(`{"state":{"at":"` + node + `"}}`)}
}

// TestFollower_EmittedEventsOnceAtTheFirstSign: an emitted event is sent once, whichever comes
// first of its commit record and its custom row; a retracted attempt's previews, and those of
// an attempt that died before its end, are never sent; an event whose preview was dropped
// comes from its row.
func TestFollower_EmittedEventsOnceAtTheFirstSign(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages []engine.FeedPage
		want  string
	}{
		{"row before the commit record", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`)}},
			{Items: []engine.HistoryEvent{customRow(`{"n": 1}`)}},
			{Live: []engine.LiveRecord{end(engine.LiveCommit, "w1")}},
		}, `emitted noted {"n": 1}`},
		{"commit record before the row (a branch)", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`), end(engine.LiveCommit, "w1")}},
			{Items: []engine.HistoryEvent{customRow(`{"n": 1}`)}},
		}, `emitted noted {"n":1}`},
		{"retracted, then the retry's", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`), end(engine.LiveRetract, "w1"), preview("w2", `{"n":2}`), end(engine.LiveCommit, "w2")}},
			{Items: []engine.HistoryEvent{customRow(`{"n":2}`)}},
		}, `emitted noted {"n":2}`},
		{"an attempt that died before its end", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`), preview("w2", `{"n":2}`), end(engine.LiveCommit, "w2")}},
			{Items: []engine.HistoryEvent{customRow(`{"n":2}`)}},
		}, `emitted noted {"n":2}`},
		{"the preview dropped, the row", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`), end(engine.LiveCommit, "w1")}},
			{Items: []engine.HistoryEvent{customRow(`{"n":0}`), customRow(`{"n":1}`)}},
		}, `emitted noted {"n":1}|emitted noted {"n":0}`},
		{"the same event twice", []engine.FeedPage{
			{Live: []engine.LiveRecord{preview("w1", `{"n":1}`), preview("w1", `{"n":1}`)}, Items: []engine.HistoryEvent{customRow(`{"n":1}`), customRow(`{"n":1}`)}},
			{Live: []engine.LiveRecord{end(engine.LiveCommit, "w1")}},
		}, `emitted noted {"n":1}|emitted noted {"n":1}`},
		{"a node's records before its rows, the next node's after", []engine.FeedPage{
			{Live: []engine.LiveRecord{chunk("w1", "reply", `"a"`), chunk("w2", "next", `"b"`)},
				Items: []engine.HistoryEvent{completed("think"), completed("reply")}},
		}, `step think|chunk messages "a"|step reply|chunk messages "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			f := &follower{previews: map[string][]engine.LiveRecord{}, sentPreviews: map[string]int{}, sentRows: map[string]int{},
				emit: func(ev platform.DurableEvent) error {
					if ev.Kind == platform.DurableStep {
						got = append(got, ev.Kind+" "+ev.Node)
					} else {
						got = append(got, ev.Kind+" "+ev.Name+" "+string(ev.Data))
					}
					return nil
				}}
			for _, p := range tc.pages {
				if _, err := f.page(t.Context(), p); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("sent %q; want %q", got, tc.want)
			}
		})
	}
}

// feedFunc is an engine.RunFeeder of a func.
type feedFunc func(q engine.FeedQuery) engine.FeedPage

func (f feedFunc) Feed(_ context.Context, _ string, q engine.FeedQuery) (engine.FeedPage, error) {
	return f(q), nil
}

// followRead runs one follower.read on a feeder that gives answers in turn (an empty answer at
// the position asked for once they are spent), and reports what page then sends and the
// queries made.
func followRead(t *testing.T, answers ...engine.FeedPage) (sent []string, queries []engine.FeedQuery, f *follower) {
	t.Helper()
	f = &follower{id: "r", after: 1, previews: map[string][]engine.LiveRecord{}, sentPreviews: map[string]int{}, sentRows: map[string]int{},
		feeder: feedFunc(func(q engine.FeedQuery) engine.FeedPage {
			queries = append(queries, q)
			if len(queries) > len(answers) {
				return engine.FeedPage{Run: "n", NextAfter: q.After, LiveNext: q.LiveAfter}
			}
			return answers[len(queries)-1]
		}),
		emit: func(ev platform.DurableEvent) error {
			if ev.Kind == platform.DurableStep {
				sent = append(sent, "step "+ev.Node)
			} else {
				sent = append(sent, "chunk "+ev.Node+" "+string(ev.Data))
			}
			return nil
		}}
	page, err := f.read(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.page(t.Context(), page); err != nil {
		t.Fatal(err)
	}
	return sent, queries, f
}

// TestFollower_StepBeforeANewStepsFirstChunks: an answer whose head read came before the step
// "think" committed, and whose read of the channel after it saw the next step's first chunk,
// is completed with think's rows, sent before the chunk.
func TestFollower_StepBeforeANewStepsFirstChunks(t *testing.T) {
	sent, queries, f := followRead(t,
		engine.FeedPage{Run: "n", NextAfter: 1, Live: []engine.LiveRecord{chunk("w2", "reply", `"a"`)}, LiveNext: 40},
		engine.FeedPage{Run: "n", NextAfter: 3, Items: []engine.HistoryEvent{completed("think")}, LiveNext: 40})
	if strings.Join(sent, "|") != `step think|chunk reply "a"` {
		t.Errorf("sent %q; want think's step, then the chunk", sent)
	}
	if len(queries) != 2 || queries[1].After != 1 || queries[1].Run != "n" || !queries[1].Live || queries[1].LiveAfter != 40 ||
		f.after != 3 || f.liveAfter != 40 {
		t.Errorf("queries %+v, position %d/%d", queries, f.after, f.liveAfter)
	}
	// The step's later chunks need no second read.
	queries = nil
	f.feeder = feedFunc(func(q engine.FeedQuery) engine.FeedPage {
		queries = append(queries, q)
		return engine.FeedPage{Run: "n", NextAfter: 3, Live: []engine.LiveRecord{chunk("w2", "reply", `"b"`)}, LiveNext: 41}
	})
	if _, err := f.read(t.Context(), 0); err != nil || len(queries) != 1 {
		t.Errorf("a later chunk of the same step: %d reads, %v", len(queries), err)
	}
}

// TestFollower_CompletingReadHoldsTheStepsLastChunks: the read that completes an answer with
// think's rows finds reply's commit too (reply wrote its last chunk after the answer's read of
// the channel, then committed): that chunk, read with those rows, is sent before reply's step.
func TestFollower_CompletingReadHoldsTheStepsLastChunks(t *testing.T) {
	sent, _, f := followRead(t,
		engine.FeedPage{Run: "n", NextAfter: 1, Live: []engine.LiveRecord{chunk("w2", "reply", `"a"`)}, LiveNext: 40},
		engine.FeedPage{Run: "n", NextAfter: 4, Items: []engine.HistoryEvent{completed("think"), completed("reply")},
			Live: []engine.LiveRecord{chunk("w2", "reply", `"!"`)}, LiveNext: 41})
	if strings.Join(sent, "|") != `step think|chunk reply "a"|chunk reply "!"|step reply` {
		t.Errorf("sent %q; want reply's chunks before its step", sent)
	}
	if f.after != 4 || f.liveAfter != 41 {
		t.Errorf("position %d/%d; want 4/41", f.after, f.liveAfter)
	}
}

// TestFollower_CatchUpReadsAreBounded: a completing read that finds yet another step's first
// chunk reads again, up to maxCatchUp reads after the answer.
func TestFollower_CatchUpReadsAreBounded(t *testing.T) {
	var answers []engine.FeedPage
	for i := range maxCatchUp + 3 {
		r := chunk("w", "step", `"x"`)
		r.Step = int64(i + 2)
		answers = append(answers, engine.FeedPage{Run: "n", NextAfter: int64(i + 1), Live: []engine.LiveRecord{r}, LiveNext: int64(40 + i)})
	}
	_, queries, _ := followRead(t, answers...)
	if len(queries) != 1+maxCatchUp {
		t.Errorf("%d reads; want the answer and %d more", len(queries), maxCatchUp)
	}
}
