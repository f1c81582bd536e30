package engine

import (
	"context"
	"fmt"
)

// Events that are never applied.
//
// An event is stored while its run is active, whether or not the run waits for it: a run
// decides its waits as it goes, so an event may arrive before its wait, or after a wait for
// its name timed out and before the run waits for that name again (a loop that reminds and
// waits once more). Only a finished run can wait for nothing any more, so the door refuses
// an event exactly then: 409 "instance is not running" — also for the run that failed
// because its wait timed out.
//
// What an active run stored and never took up is recorded when the run finishes: the
// finishing step (completion, failure, cancellation) writes one event_not_applied row per
// event left in its inbox, in arrival order, before its run_completed, run_failed or
// run_terminated row, in the same batch — so a client that sent an event after its wait
// timed out reads in the history that it was not applied, with its inbox_seq (the one of its
// event_received row). At most maxNotApplied rows are written; the last then says how many
// more were left ("not_listed"). Reading the inbox costs one query at the finish, only for a
// run with events left (Pending > 0).

// maxNotApplied bounds the event_not_applied rows of one finishing batch (a batch holds at
// most 100 operations).
const maxNotApplied = 32

// unappliedEvent is an inbox event left when its run finishes.
type unappliedEvent struct {
	name string
	seq  int64
}

// leftovers are the inbox events a finishing step (finisher) found never applied, how many
// more the inbox holds, and the InboxSeq of the head they were read for.
type leftovers struct {
	evs  []unappliedEvent
	more int64
	of   int64
}

// noteUnapplied fills the unapplied events of o, when it finishes the run, for base, the head
// it is committed on: the inbox rows of base's generation, read again only when the inbox
// changed since the last read (a rebase past raised events).
func (e *Engine) noteUnapplied(ctx context.Context, base *head, o outcome) error {
	f, ok := o.(finisher)
	if !ok {
		return nil
	}
	l := f.leftovers()
	if base.pending <= 0 {
		*l = leftovers{}
		return nil
	}
	if l.of == base.inboxSeq && l.evs != nil {
		return nil
	}
	evs, more, err := e.inboxEvents(ctx, base)
	if err != nil {
		return err
	}
	*l = leftovers{evs: evs, more: more, of: base.inboxSeq}
	return nil
}

// inboxEvents returns the first maxNotApplied events in h's inbox, oldest first, and how
// many more it holds.
func (e *Engine) inboxEvents(ctx context.Context, h *head) ([]unappliedEvent, int64, error) {
	from, to := genRange('i', h.gen)
	q := Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to, Limit: maxNotApplied}
	page, err := e.store.Query(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("read inbox run=%s: %w", h.runID, err)
	}
	out := make([]unappliedEvent, 0, len(page.Entities))
	for _, ent := range page.Entities {
		out = append(out, unappliedEvent{name: str(ent.Properties, pEvent), seq: parseSeq(ent.RowKey)})
	}
	return out, max(h.pending-int64(len(out)), 0), nil
}

// notAppliedRows returns the event_not_applied rows of evs, at node; the last one counts
// more events left unlisted.
func notAppliedRows(rows []histRow, evs []unappliedEvent, more int64, node string) []histRow {
	for i, ev := range evs {
		data := []string{"event_name", jstr(ev.name), "inbox_seq", itoa(ev.seq)}
		if i == len(evs)-1 && more > 0 {
			data = append(data, "not_listed", itoa(more))
		}
		rows = append(rows, histRow{typ: HistoryEventNotApplied, name: OrchestratorName, node: node, data: jsonObject(data...)})
	}
	return rows
}
