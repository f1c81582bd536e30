package engine

import (
	"time"
)

// Durable sleeps (durable.Sleep, durable.SleepUntil). A sleep decision commits like a next
// decision whose next visit may not run before the wake-up time: the head moves to the next
// node with NotBefore set (the timer retries use), and the run's work item is enqueued with
// that delay. A work item that arrives early (a sleep longer than the queue's MaxDelay is
// enqueued capped at it) goes back on the queue with the rest of the delay (process in
// workitem.go), so a sleep may last longer than a queue message can be delayed. Events raised
// meanwhile wait in the inbox; a cancel ends the sleep.

// HistorySleepStarted is the history row of a sleep decision: data {"until": "<RFC 3339>",
// "next_node": "<node>"}.
const HistorySleepStarted = "sleep_started"

// slept is a visit whose route sleeps: the run continues at the decision's next node, not
// before the wake-up time.
type slept struct{ visited }

func (o *slept) apply(c *commitBuilder) {
	o.visited.apply(c)
	n, d := c.n, o.decision
	until := d.WakeTime(c.now)
	n.node = d.NextNode
	n.custom = customStatus(c.base, d.NextNode)
	n.runnable = true
	if until.After(c.now) {
		n.notBefore = until.UnixNano()
	}
	c.row(HistorySleepStarted, OrchestratorName, o.node,
		jsonObject("until", jstr(until.UTC().Format(time.RFC3339Nano)), "next_node", jstr(d.NextNode)))
}
