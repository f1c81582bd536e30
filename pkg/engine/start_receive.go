package engine

import (
	"context"
	"time"
)

// A start's own receive (Options.ReceiveOnStart). Without the embedded dispatcher a run's
// work items are delivered by a host's queue trigger, which polls the queue with a back-off:
// on an app idle for a few seconds the Functions host waits up to maxPollingInterval before
// it looks again, and nothing the engine writes to the queue cuts that short (only the host's
// own output bindings do). So a start, once its first work item is on the queue, receives one
// item itself and handles it in the background, after the start has answered.
//
// The item is handled as the embedded dispatcher's worker handles one (handleMessage): hidden
// for VisibilityTimeout and renewed while it runs, deleted only once its steps are committed
// and whatever comes next is on the queue, moved to the poison queue past MaxDequeueCount. So
// no new fence is needed: the queue's visibility says who handles the item, the step's
// commit is conditional as ever, and a handling that dies — the process killed after the
// start answered, which under the host nothing prevents — leaves the item to come back to
// the host's trigger after its visibility timeout, as a redelivery (the kill limit,
// workitem.go). The host never sees an item while this handling holds it, so the first step
// runs once, not once here and once in the trigger.
//
// The item received is whichever the queue hands out first: on an idle app the start's own,
// on a busy one perhaps another run's (work all the same; the start's is then delivered by
// the trigger, which on a busy app polls without back-off). A receive that finds nothing (the
// trigger took the item first) costs one queue operation and ends.
//
// Bounds. At most Concurrency handlings run at a time (a start past that leaves its item to
// the trigger). A handling runs its run's steps for at most StepBudget and then hands the run
// back to the queue, as any delivery does, and its context ends StepLease after it began:
// under the host StepLease is functionTimeout (launch), the longest a trigger's invocation
// may take before the host kills it, so a step run here is cut where an invocation's would be
// and a hold it takes is never held past the lease a judge assumes. A step cut so ends the
// handling with an error, which puts the item back for the trigger (a retried copy, as
// any failed handling does; never a death); a step that ignores its context's end keeps its
// goroutine, but the item is renewed no longer than StepLease, so it comes back to the trigger
// a visibility timeout later, as a killed invocation's would. Close ends them.

// receiveOnStart starts the background handling of one work item after a start, when
// ReceiveOnStart is set, the embedded dispatcher is not running, the engine is not closed and
// fewer than Concurrency such handlings run.
func (e *Engine) receiveOnStart() {
	if !e.opts.ReceiveOnStart || e.started.Load() {
		return
	}
	select {
	case e.receiving <- struct{}{}:
	default:
		return // enough handlings under way: the trigger delivers this one
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		<-e.receiving
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() { <-e.receiving }()
		e.receiveOne()
	}()
}

// receiveOne receives one work item and handles it as the dispatcher's worker would, within
// StepLease: its context ends then, and the item's visibility is renewed no longer.
func (e *Engine) receiveOne() {
	until := time.Now().Add(e.opts.StepLease)
	ctx, cancel := context.WithDeadline(e.bg, until)
	defer cancel()
	msgs, err := e.queue.Receive(ctx, 1, e.opts.VisibilityTimeout)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("receive a work item after a start", "error", err.Error())
		}
		return
	}
	for _, m := range msgs {
		if m.DequeueCount <= e.opts.MaxDequeueCount || !e.toPoison(ctx, m) {
			e.handleMessageUntil(ctx, m, until)
		}
	}
}
