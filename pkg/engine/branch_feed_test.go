package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// emitWork is fanWork that emits one "searched" event naming its item.
func emitWork(ctx context.Context, s fanState) (any, error) {
	item, err := durable.BranchItem[int](ctx)
	if err != nil {
		return nil, err
	}
	if err := durable.Emit(ctx, "searched", map[string]int{"item": item}); err != nil {
		return nil, err
	}
	return fanWork(ctx, s)
}

// handleWhere handles, by hand, the first visible work item whose body contains part, and puts
// the others back.
func (r *rig) handleWhere(t testing.TB, part string) {
	t.Helper()
	msgs, err := r.queue.Receive(context.Background(), engine.MaxReceive, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	handled := false
	for _, m := range msgs {
		if handled || !strings.Contains(string(m.Body), part) {
			if _, err := r.queue.Extend(context.Background(), m, 0); err != nil {
				t.Fatal(err)
			}
			continue
		}
		handled = true
		if err := r.e.HandleWorkItem(context.Background(), m.Body, m.DequeueCount); err != nil {
			t.Fatal(err)
		}
		if err := r.queue.Delete(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	if !handled {
		t.Fatalf("no work item with %s among %d", part, len(msgs))
	}
}

// A branch's emitted events are stored with its completion row, at the slots after it; a feed
// never moves past the start of an open fan-out region, so a follower misses none of the rows
// branches fill later, and sees them all, in slot order, once the join commits.
func TestEngine_FanOut_EmittedEventsAndTheFeedHorizon(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, fanGraph(t, "fan", emitWork))
	id := r.start(t, "fan", "", fanInput(3))
	r.handleWhere(t, `"step":0`) // plan: the fan-out commits
	r.handleWhere(t, `"br":2`)   // the last branch completes first
	open, err := r.e.Feed(t.Context(), id, engine.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range open.Items {
		if it.Type == engine.HistoryBranchCompleted || it.Type == engine.HistoryCustom {
			t.Fatalf("the feed shows a row of the open region: %+v", it)
		}
	}
	if n := len(open.Items); n == 0 || open.Items[n-1].Type != engine.HistoryBranchesStarted || open.NextAfter != open.Items[n-1].Sequence {
		t.Fatalf("open region: items %+v, next_after %d; want up to branches_started", open.Items, open.NextAfter)
	}
	r.drive(t)
	rest, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: open.NextAfter})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range rest.Items {
		switch it.Type {
		case engine.HistoryBranchCompleted, engine.HistoryCustom:
			got = append(got, it.Type+":"+string(it.Data)[:min(len(it.Data), 40)])
		}
	}
	want := []string{}
	for i := range 3 {
		want = append(want, engine.HistoryBranchCompleted+`:{"index":`+string(rune('0'+i)),
			engine.HistoryCustom+`:{"name":"searched","data":{"item":`+string(rune('0'+i))+"}}")
	}
	if len(got) != len(want) {
		t.Fatalf("after the join: %q\nwant %d rows", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("after the join, row %d: %q, want prefix %q (all: %q)", i, got[i], want[i], got)
		}
	}
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
}
