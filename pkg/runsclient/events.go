package runsclient

import (
	"encoding/json"
	"fmt"
	"time"
)

// Types of history rows and feed items (Event.Type), as docs/http-runs.md lists them.
const (
	TypeRunStarted         = "run_started"
	TypeNodeCompleted      = "node_completed"
	TypeRouteResolved      = "route_resolved"
	TypeWaitStarted        = "wait_started"
	TypeWaitTimedOut       = "wait_timed_out"
	TypeEventReceived      = "event_received"
	TypeEventApplied       = "event_applied"
	TypeEventRefused       = "event_refused"
	TypeEventNotApplied    = "event_not_applied"
	TypeNodeRetryScheduled = "node_retry_scheduled"
	TypeNodeFailed         = "node_failed"
	TypeSleepStarted       = "sleep_started"
	TypeBranchesStarted    = "branches_started"
	TypeBranchCompleted    = "branch_completed"
	TypeBranchesJoined     = "branches_joined"
	TypeChildStarted       = "child_started"
	TypeChildFinished      = "child_finished"
	TypeChildCompleted     = "child_completed"
	TypeCustom             = "custom"
	TypeRunCompleted       = "run_completed"
	TypeRunFailed          = "run_failed"
	TypeRunTerminated      = "run_terminated"
	// TypeLive is a record of the run's live channel (FeedEvent.Live), not a history row.
	TypeLive = "live"
)

// WaitStarted is the data of a wait_started row: the run waits for EventName, then goes on
// at ResumeNode; a bounded wait has a Deadline, past which it goes to TimeoutNode.
type WaitStarted struct {
	EventName   string     `json:"event_name"`
	ResumeNode  string     `json:"resume_node"`
	Deadline    *time.Time `json:"deadline,omitempty"`
	TimeoutNode string     `json:"timeout_node,omitempty"`
}

// EventReceived is the data of an event_received row (Event.Name is the event's name).
type EventReceived struct {
	InboxSeq int64           `json:"inbox_seq"`
	Payload  json.RawMessage `json:"payload"`
}

// Custom is the data of a custom row: an event a node emitted (durable.Emit).
type Custom struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

// SleepStarted is the data of a sleep_started row: the run sleeps until Until, then runs
// NextNode.
type SleepStarted struct {
	Until    time.Time `json:"until"`
	NextNode string    `json:"next_node"`
}

// NodeFailed is the data of a node_failed row: a node failed past its retries and the run
// took its failure route to FailureNode.
type NodeFailed struct {
	Error       string `json:"error"`
	FailureNode string `json:"failure_node"`
}

// ChildStarted is the data of a child_started row.
type ChildStarted struct {
	ChildInstanceID string `json:"child_instance_id"`
	GraphName       string `json:"graph_name"`
	ResumeNode      string `json:"resume_node"`
	Into            string `json:"into"`
}

// DataOf decodes an event's data into T (WaitStarted for a wait_started row, Custom for a
// custom one, …, or a type of your own).
func DataOf[T any](e Event) (T, error) {
	var v T
	if err := json.Unmarshal(e.Data, &v); err != nil {
		return v, fmt.Errorf("runsclient: decode the data of %s row %d: %w", e.Type, e.Seq, err)
	}
	return v, nil
}
