package engine

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// HistoryCustom is the type of the history row (and feed item) of an event a handler emitted
// with durable.Emit. Its name is the emitted name, its node the node of the step that emitted
// it, and its data {"name": <name>, "data": <data>}.
const HistoryCustom = "custom"

// Emitted events. A step's handlers (node and route of a visit, or an event handler) run with
// a fresh graphrun.Emitter in their context (stepContext). What they emitted travels in the
// step's outcome and is written by the step's own commit, one custom row per event before the
// step's rows, in the same batch: no storage operation of its own (a document above the inline
// limit spills to the payload store, as a large state does). The outcome is built once per
// attempt and the commit is exactly once, so the events are stored exactly once: a rebased
// commit writes the same events, a dropped or failed attempt (a handler error, a lost race,
// a crash before the commit) writes none, and a step that runs again emits afresh into a new
// Emitter. durable.MaxEmitsPerStep bounds a step's events, so a commit stays far within the
// 100 operations of a batch.

// stepContext returns the context a step's handlers run in: ctx with the step's StepInfo and
// a fresh Emitter, whose events the step's outcome carries, and whose live sink, on an engine
// with a live channel, is the attempt's writer (live.go), kept on sc until the step ends
// (endLive).
func (e *Engine) stepContext(ctx context.Context, sc *stepCtx, h *head) (context.Context, *graphrun.Emitter) {
	ctx, em := graphrun.WithEmitter(graphrun.WithStepInfo(ctx, stepInfo(h)))
	if w := e.newLiveWriter(h, h.step+1, int(h.attempt)+1, h.node, -1, h.attempt > 0 || h.restarts > 0); w != nil {
		em.SetLive(w)
		sc.live = w
	}
	return ctx, em
}

// handlersDone ends the live writes of the step's handlers before the step commits: what they
// wrote is appended first. failed: a handler's error, whose chunks the end retracts.
func (sc *stepCtx) handlersDone(ctx context.Context, failed bool) {
	if sc.live != nil {
		sc.live.close(ctx)
		sc.live.attemptFailed = failed
	}
}

// endLive writes the end of the step's live writes once its commit is settled: committed
// (and its handlers did not fail), its chunks are final; otherwise retracted.
func (sc *stepCtx) endLive(ctx context.Context, committed bool) {
	w := sc.live
	if w == nil {
		return
	}
	sc.live = nil
	w.close(ctx) // a step that ended before its handlers' end (an error) stops writing here
	if committed && !w.attemptFailed {
		w.end(ctx, LiveCommit)
		return
	}
	w.end(ctx, LiveRetract)
}

// emittedRows returns rows with the custom rows of evs, the events a step's handlers emitted,
// in front: the handlers emitted them before their step completed. They belong to the node
// of the step's first row (node when it has none).
func emittedRows(rows []histRow, evs []graphrun.EmittedEvent, node string) []histRow {
	if len(evs) == 0 {
		return rows
	}
	if len(rows) > 0 {
		node = rows[0].node
	}
	out := make([]histRow, 0, len(evs)+len(rows))
	for _, ev := range evs {
		out = append(out, histRow{typ: HistoryCustom, name: ev.Name, node: node,
			data: jsonObject("name", jstr(ev.Name), "data", string(ev.Data))})
	}
	return append(out, rows...)
}
