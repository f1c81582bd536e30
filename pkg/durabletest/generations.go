package durabletest

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// HistoryContinuedAsNew is the row that begins a generation after a continue-as-new
// (durable.ContinueAsNew): its data is {"generation", "initial_state"}.
const HistoryContinuedAsNew = engine.HistoryContinuedAsNew

// Generation returns how often run id continued as new (durable.ContinueAsNew): 0 for a run
// that never did. History, State and Visits read the current generation; GenerationHistory
// the one before.
func (k *Kit[S]) Generation(id string) int64 {
	k.t.Helper()
	return k.Run(id).Generation
}

// GenerationHistory returns the history rows of generation gen of run id, oldest first: the
// current generation's (as History) or the previous one's, the two the engine keeps. It fails
// the test for any other generation.
func (k *Kit[S]) GenerationHistory(id string, gen int64) []HistoryEvent {
	k.t.Helper()
	var out []HistoryEvent
	token := ""
	for {
		page, err := k.current().eng.GenerationHistory(context.Background(), id, gen, token, 1000)
		if err != nil {
			k.t.Fatalf("durabletest: history of generation %d of %s: %v", gen, id, err)
		}
		out = append(out, page.Events...)
		if token = page.ContinuationToken; token == "" {
			return out
		}
	}
}

// Feed returns the rows of run id's feed after position after (0: from its first row), as a
// client of GET /api/runs/{id}/feed reads them, and the position to read on from. The feed
// goes on across generations: a position taken before a continue-as-new reads on into the new
// generation, whose continued_as_new row marks where it begins. It does not wait.
func (k *Kit[S]) Feed(id string, after int64) (items []HistoryEvent, next int64) {
	k.t.Helper()
	q := engine.FeedQuery{After: after}
	for {
		page, err := k.current().eng.Feed(context.Background(), id, q)
		if err != nil {
			k.t.Fatalf("durabletest: feed of %s after %d: %v", id, q.After, err)
		}
		items = append(items, page.Items...)
		if len(page.Items) == 0 || page.End || page.NextAfter == q.After {
			return items, page.NextAfter
		}
		q.After, q.Run = page.NextAfter, page.Run
	}
}

// rowsHolding returns the history of the generation of run id that holds row seq: the
// current one's, or the previous one's for a row before it (StateAfter).
func (k *Kit[S]) rowsHolding(id string, seq int64) []HistoryEvent {
	k.t.Helper()
	rows := k.History(id)
	if len(rows) > 0 && seq < rows[0].Sequence {
		if gen := k.Generation(id); gen > 0 {
			return k.GenerationHistory(id, gen-1)
		}
	}
	return rows
}
