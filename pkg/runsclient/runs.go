package runsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Status is a run's runtime status.
type Status string

// The run statuses.
const (
	StatusPending    Status = "Pending"
	StatusRunning    Status = "Running"
	StatusCompleted  Status = "Completed"
	StatusFailed     Status = "Failed"
	StatusTerminated Status = "Terminated"
)

// Finished reports Completed, Failed and Terminated: a run that moves no more (until it is
// rewound or started again).
func (s Status) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusTerminated
}

// StartOptions are the optional members of a start.
type StartOptions struct {
	// InstanceID names the run; "" lets the app make a UUID. A finished run with the same id
	// is replaced; an unfinished one is a 409 (ErrConflict).
	InstanceID string
	// Metadata is stored with the run and echoed in its status (a JSON object), never read.
	Metadata any
	// SearchKeys are business keys the run is listed by (List's Keys), next to those the
	// graph declares.
	SearchKeys map[string]string
}

// Started is the answer of a start.
type Started struct {
	// ID is the run's instance id.
	ID string `json:"id"`
	// StatusURL is the run's status URL (the answer's Location).
	StatusURL string `json:"statusQueryGetUri"`
	// SendEventURL is the events URL, "{eventName}" literal.
	SendEventURL string `json:"sendEventPostUri"`
	// TerminateURL is the cancel URL.
	TerminateURL string `json:"terminatePostUri"`
	// RetryAfter is the answer's Retry-After: how long the app suggests waiting before polling
	// the status (PollForCompletion's default interval).
	RetryAfter time.Duration `json:"-"`
}

// startBody is the body of POST /graphs/{graph_name}/runs.
type startBody struct {
	InstanceID string            `json:"instance_id,omitempty"`
	Input      any               `json:"input"`
	Metadata   any               `json:"metadata,omitempty"`
	SearchKeys map[string]string `json:"search_keys,omitempty"`
}

// StartRun starts a run of graph with input (anything that encodes to a JSON object; nil
// means {}). Errors: ErrNotFound for an unknown graph, ErrBadRequest for an input the graph's
// state refuses (the *Error's "details" name the fields), ErrConflict for an unfinished run
// with opts.InstanceID. A start whose answer was lost is an *UnknownOutcomeError, not retried.
func (c *Client) StartRun(ctx context.Context, graph string, input any, opts *StartOptions) (*Started, error) {
	if opts == nil {
		opts = &StartOptions{}
	}
	if input == nil {
		input = struct{}{}
	}
	body, err := jsonBody(startBody{InstanceID: opts.InstanceID, Input: input, Metadata: opts.Metadata, SearchKeys: opts.SearchKeys})
	if err != nil {
		return nil, err
	}
	var out Started
	h, err := c.do(ctx, &request{method: http.MethodPost, path: "/graphs/" + seg(graph) + "/runs", body: body}, http.StatusAccepted, &out)
	if err != nil {
		return nil, err
	}
	if loc := h.Get("Location"); loc != "" {
		out.StatusURL = loc
	}
	out.RetryAfter = parseRetryAfter(h.Get("Retry-After"), time.Now())
	return &out, nil
}

// Start is StartRun with a typed input: the graph's state model, or the part of it a start
// gives.
func Start[In any](ctx context.Context, c *Client, graph string, input In, opts *StartOptions) (*Started, error) {
	return c.StartRun(ctx, graph, input, opts)
}

// RunStatus is a run's status (GET /runs/{instance_id}).
type RunStatus struct {
	InstanceID    string `json:"instance_id"`
	RuntimeStatus Status `json:"runtime_status"`
	// Progress is where the run is and what it waits for (custom_status); nil while Pending.
	Progress *Progress `json:"custom_status"`
	// Input is what the run was started with.
	Input RunInput `json:"input"`
	// Output is the output of a Completed run (Result decodes it), the failure message of a
	// Failed one, the reason of a Terminated one; null otherwise.
	Output json.RawMessage `json:"output"`
	// Generation counts the run's continue-as-new turns (0 in its first).
	Generation int `json:"generation,omitempty"`
	// ParentInstanceID is set for a child run; ChildInstanceIDs for a run that started some.
	ParentInstanceID string   `json:"parent_instance_id,omitempty"`
	ChildInstanceIDs []string `json:"child_instance_ids,omitempty"`
	// SleepingUntil is the end of the run's durable sleep (nil when it does not sleep).
	SleepingUntil *time.Time `json:"sleeping_until,omitempty"`
	// NodeRetry is the current node's next attempt after a failed one.
	NodeRetry *Retrying `json:"node_retry,omitempty"`
	// BranchesRetrying are the open fan-out's branches backing off.
	BranchesRetrying []BranchRetrying `json:"branches_retrying,omitempty"`
}

// Progress is the custom_status of a run.
type Progress struct {
	GraphName    string `json:"graph_name"`
	GraphVersion string `json:"graph_version"`
	GraphHash    string `json:"graph_hash"`
	CurrentNode  string `json:"current_node"`
	// WaitingForEvent is the event the run waits for ("" when none).
	WaitingForEvent string `json:"waiting_for_event,omitempty"`
	// WaitingForChild is the child run it waits for ("" when none).
	WaitingForChild string `json:"waiting_for_child,omitempty"`
	// ResumeNode is where the run goes on after its wait.
	ResumeNode string `json:"resume_node,omitempty"`
	// WaitingForVersion is the graph hash the run waits to be served by (a rolling deploy),
	// Message why.
	WaitingForVersion string `json:"waiting_for_version,omitempty"`
	Message           string `json:"message,omitempty"`
}

// RunInput is what a run was started with.
type RunInput struct {
	GraphName    string          `json:"graph_name"`
	GraphHash    string          `json:"graph_hash"`
	InitialState json.RawMessage `json:"initial_state"`
	Metadata     json.RawMessage `json:"metadata"`
}

// Retrying is a node's next attempt after a failed one: Attempt 2 is the first retry.
type Retrying struct {
	Attempt int       `json:"attempt"`
	RetryAt time.Time `json:"retry_at"`
}

// BranchRetrying is a fan-out branch's next attempt, by its index in the fan-out.
type BranchRetrying struct {
	Index   int       `json:"index"`
	Attempt int       `json:"attempt"`
	RetryAt time.Time `json:"retry_at"`
}

// Result is the output of a Completed run.
type Result struct {
	GraphName    string          `json:"graph_name"`
	GraphVersion string          `json:"graph_version"`
	GraphHash    string          `json:"graph_hash"`
	FinalNode    string          `json:"final_node"`
	State        json.RawMessage `json:"state"`
}

// Result decodes the output of a Completed run; a run in another status is an error naming
// it (with the failure message of a Failed run).
func (s *RunStatus) Result() (*Result, error) {
	if s.RuntimeStatus != StatusCompleted {
		var why string
		if json.Unmarshal(s.Output, &why) == nil && why != "" {
			return nil, fmt.Errorf("runsclient: run %s is %s: %s", s.InstanceID, s.RuntimeStatus, why)
		}
		return nil, fmt.Errorf("runsclient: run %s is %s, not Completed", s.InstanceID, s.RuntimeStatus)
	}
	var r Result
	if err := json.Unmarshal(s.Output, &r); err != nil {
		return nil, fmt.Errorf("runsclient: decode output of run %s: %w", s.InstanceID, err)
	}
	return &r, nil
}

// FinalState decodes the final state of a Completed run into S (Result's errors).
func FinalState[S any](s *RunStatus) (S, error) {
	var out S
	r, err := s.Result()
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(r.State, &out); err != nil {
		return out, fmt.Errorf("runsclient: decode final state of run %s: %w", s.InstanceID, err)
	}
	return out, nil
}

// Status reads a run's status. Errors: ErrNotFound.
func (c *Client) Status(ctx context.Context, instanceID string) (*RunStatus, error) {
	var out RunStatus
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: "/runs/" + seg(instanceID), resend: true}, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EventOptions are the optional parts of an event.
type EventOptions struct {
	// IdempotencyKey makes a retried send store the event once; "" means a key of the
	// call's own, so the client's own retries are safe. Give one that outlives the process
	// (a message id, say) when a caller of yours may send the same event again.
	IdempotencyKey string
}

// SendEvent sends run instanceID the event name with payload (any JSON value; nil is null).
// It returns once the event is stored; the run applies it when it waits for that name.
// Errors: ErrNotFound for an unknown run or an event name the graph has no handler for,
// ErrConflict for a finished run, ErrBadRequest for a payload the handler's type refuses.
func (c *Client) SendEvent(ctx context.Context, instanceID, name string, payload any, opts *EventOptions) error {
	body, err := jsonBody(payload)
	if err != nil {
		return err
	}
	key := ""
	if opts != nil {
		key = opts.IdempotencyKey
	}
	if key == "" {
		key = c.newKey()
	}
	r := &request{method: http.MethodPost, path: "/runs/" + seg(instanceID) + "/events/" + seg(name), body: body,
		header: http.Header{"Idempotency-Key": {key}}, resend: true}
	_, err = c.do(ctx, r, http.StatusAccepted, nil)
	return err
}

// Cancel asks run instanceID to terminate with reason ("" means the app's default, "cancel
// requested by client"). It returns once the request is stored; the run becomes Terminated
// when the engine applies it. Errors: ErrNotFound, ErrConflict for a finished run.
func (c *Client) Cancel(ctx context.Context, instanceID, reason string) error {
	var body []byte
	if reason != "" {
		var err error
		if body, err = jsonBody(map[string]string{"reason": reason}); err != nil {
			return err
		}
	}
	_, err := c.do(ctx, &request{method: http.MethodPost, path: "/runs/" + seg(instanceID) + "/cancel", body: body}, http.StatusAccepted, nil)
	return err
}

// Purge deletes a finished run, its history and its child runs. Errors: ErrNotFound,
// ErrConflict for a run that is not finished (or a child its parent still waits for).
func (c *Client) Purge(ctx context.Context, instanceID string) error {
	_, err := c.do(ctx, &request{method: http.MethodDelete, path: "/runs/" + seg(instanceID)}, http.StatusOK, nil)
	return err
}

// DefaultPollInterval is PollForCompletion's interval when none is given: the Retry-After
// of the app's 202 for a start.
const DefaultPollInterval = 10 * time.Second

// PollForCompletion reads the run's status every interval (0 means DefaultPollInterval, or
// pass Started.RetryAfter) until it has finished, and returns it: for an app that does not
// serve the feed, where WaitForCompletion cannot follow it. Errors: Status's, and ctx's.
func (c *Client) PollForCompletion(ctx context.Context, instanceID string, interval time.Duration) (*RunStatus, error) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	for {
		st, err := c.Status(ctx, instanceID)
		if err != nil {
			return nil, err
		}
		if st.RuntimeStatus.Finished() {
			return st, nil
		}
		if err := c.sleep(ctx, interval); err != nil {
			return nil, fmt.Errorf("runsclient: poll run %s: %w", instanceID, err)
		}
	}
}
