package engine

import (
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
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

// sleepStarted applies to n (built from base, the step committing the sleep decision d of
// node at now) the sleep: the run continues at d.NextNode, not before the wake-up time. It
// returns the sleep_started row.
func sleepStarted(n, base *head, node string, d durable.RouteDecision, now time.Time) histRow {
	until := d.WakeTime(now)
	n.node = d.NextNode
	n.custom = customStatus(base, d.NextNode)
	n.runnable = true
	if until.After(now) {
		n.notBefore = until.UnixNano()
	}
	return histRow{typ: HistorySleepStarted, name: OrchestratorName, node: node,
		data: jsonObject("until", jstr(until.UTC().Format(time.RFC3339Nano)), "next_node", jstr(d.NextNode))}
}
