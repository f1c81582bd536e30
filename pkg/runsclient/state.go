package runsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// RunState is a run's current state and where it stands (GET /runs/{instance_id}/state),
// also while it waits, sleeps or is in a fan-out.
type RunState struct {
	InstanceID    string `json:"instance_id"`
	GraphName     string `json:"graph_name"`
	RuntimeStatus Status `json:"runtime_status"`
	// State is the run's current state (DecodeState or StateOf decode it).
	State json.RawMessage `json:"state"`
	// Step is the number of committed steps.
	Step int64 `json:"step"`
	// Generation counts the run's continue-as-new turns (0 in its first).
	Generation int `json:"generation"`
	// At is where the run stands.
	At Position `json:"at"`
}

// Position is where a run stands: the nodes about to run or running, the events it waits
// for, the end of its sleep, its fan-out's progress, a step's back-off.
type Position struct {
	Nodes      []string `json:"nodes"`
	WaitingFor []string `json:"waiting_for"`
	// SleepingUntil is set while the run sleeps.
	SleepingUntil *time.Time `json:"sleeping_until,omitempty"`
	// Branches is set in a fan-out.
	Branches *Branches `json:"branches,omitempty"`
	// RetryAt is set while a step waits to retry.
	RetryAt *time.Time `json:"retry_at,omitempty"`
}

// Branches is a fan-out's progress.
type Branches struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// DecodeState decodes the run's state into v.
func (s *RunState) DecodeState(v any) error {
	if err := json.Unmarshal(s.State, v); err != nil {
		return fmt.Errorf("runsclient: decode state of run %s: %w", s.InstanceID, err)
	}
	return nil
}

// State reads a run's current state and position. Errors: ErrNotFound.
func (c *Client) State(ctx context.Context, instanceID string) (*RunState, error) {
	var out RunState
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: "/runs/" + seg(instanceID) + "/state", resend: true}, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StateOf reads a run's state (State) and decodes it into S.
func StateOf[S any](ctx context.Context, c *Client, instanceID string) (S, *RunState, error) {
	var s S
	st, err := c.State(ctx, instanceID)
	if err != nil {
		return s, nil, err
	}
	err = st.DecodeState(&s)
	return s, st, err
}
