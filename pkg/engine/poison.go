package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The poison rescue: the repair pass's second half.
//
// A work item that runs out of deliveries goes to the work queue's poison queue: the
// Functions host moves it to "<queue>-poison" after host.json's maxDequeueCount, the
// embedded dispatcher after Options.MaxDequeueCount. Deliveries run out for two reasons: a
// step that kills its worker, or a storage outage longer than the delivery budget
// (maxDequeueCount × visibilityTimeout), during which no handling can even read the run.
// The dequeue count cannot tell them apart; the step's hold and the deaths counted on the run
// (workitem.go) can. So
// the repair pass reads the poison queue — at most poisonPerPass messages per pass, never a
// table scan — and settles each message by its run's head:
//
//   - the run is gone, finished, replaced, or waits for an event with no timer: dropped
//     (nothing to run; an event's own dispatch wakes a waiting run);
//   - its current step was started MaxStepStarts times without completing (the deaths counted
//     on the head, and its hold when that counts): the run fails as poison, with the same
//     error a redelivery would give it;
//   - otherwise a fresh work item for the run's current step goes to the work queue (delayed
//     to a retry back-off or wait deadline still ahead), with a fresh dequeue count.
//
// Then the poison message is deleted. The fresh item names the run's current step, not the
// poisoned item's: the handling that poisoned may have committed steps in-process before it
// failed, and an item for a passed step would be dropped on its first delivery. It is not
// marked as a redelivery, so its delivery takes no hold unless the head has one or counted
// deaths: an outage that poisoned an item whose step never started counts nothing. A
// duplicate item (the run was also rescued from the due index, or a worker still holds one)
// is harmless: the conditional commit keeps one step. A pass that fails (storage down)
// leaves the rest to the next pass: an unsettled message reappears after poisonVisibility.

// poisonPerPass bounds the poison messages one repair pass settles.
const poisonPerPass = 4 * MaxReceive

// poisonVisibility hides a poison message while a pass settles it.
const poisonVisibility = time.Minute

// rescuePoison settles up to poisonPerPass messages of the poison queue and returns how
// many runs it dispatched.
func (e *Engine) rescuePoison(ctx context.Context) (int, error) {
	pq := poisonQueueOf(e.queue)
	if pq == nil {
		return 0, nil
	}
	n := 0
	for seen := 0; seen < poisonPerPass; {
		msgs, err := pq.Receive(ctx, min(MaxReceive, poisonPerPass-seen), poisonVisibility)
		if errors.Is(err, ErrNotFound) {
			return n, nil // the poison queue does not exist yet
		}
		if err != nil {
			return n, fmt.Errorf("receive poison work items: %w", err)
		}
		if len(msgs) == 0 {
			return n, nil
		}
		for _, m := range msgs {
			seen++
			dispatched, err := e.rescue(ctx, m)
			if err != nil {
				return n, fmt.Errorf("rescue poison work item %s: %w", m.ID, err)
			}
			if dispatched {
				n++
			}
			if err := pq.Delete(ctx, m); err != nil && !errors.Is(err, ErrNotFound) {
				return n, fmt.Errorf("delete poison work item %s: %w", m.ID, err)
			}
		}
	}
	return n, nil
}

// rescue settles one poison message (see above) and reports whether it dispatched its run.
func (e *Engine) rescue(ctx context.Context, m Message) (bool, error) {
	it, br, err := decodeWorkItem(m.Body)
	if err != nil {
		e.log.Error("dropping malformed poison work item", "message_id", m.ID, "error", err.Error())
		return false, nil
	}
	if br != nil {
		return e.rescueBranch(ctx, *br) // branch_worker.go
	}
	h, err := e.getHead(ctx, it.RunID)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case h.gen != it.Gen || (it.Nonce != "" && h.nonce != it.Nonce) || !h.active():
		return false, nil
	}
	now := e.clock().UnixNano()
	var delay time.Duration
	switch {
	case h.notBefore > now:
		delay = time.Duration(h.notBefore - now)
	case h.waiting != "" && !h.runnable && h.waitDeadline == 0:
		return false, nil
	case h.waiting != "" && !h.runnable && h.waitDeadline > now && h.pending == 0:
		delay = time.Duration(h.waitDeadline - now)
	default:
		deaths, err := e.deaths(ctx, h)
		if err != nil {
			return false, err
		}
		if e.overKillLimit(deaths) {
			return false, e.failPoison(ctx, h, deaths+1)
		}
	}
	if err := e.dispatchItem(ctx, itemOf(h), delay); err != nil {
		return false, err
	}
	e.log.Info("repair put a poisoned work item back on the queue", "run_id", h.runID, "graph", h.graph, "step", h.step,
		"restarts", h.restarts, "message_id", m.ID)
	return true, nil
}
