package engine

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RunProgress is a run's custom status decoded: where the run is and what it waits for.
type RunProgress struct {
	// GraphName is the run's graph.
	GraphName string `json:"graph_name"`
	// GraphVersion is the version of the graph the run is pinned to.
	GraphVersion string `json:"graph_version"`
	// GraphHash is the hash of that version.
	GraphHash string `json:"graph_hash"`
	// CurrentNode is the node of the current (or last) visit.
	CurrentNode string `json:"current_node"`
	// WaitingForEvent is the event the run waits for; "" while it executes.
	WaitingForEvent string `json:"waiting_for_event,omitempty"`
	// ResumeNode is where the run continues after WaitingForEvent or WaitingForChild.
	ResumeNode string `json:"resume_node,omitempty"`
	// WaitingForChild is the child run (durable.StartChild) the run waits for; "" otherwise.
	WaitingForChild string `json:"waiting_for_child,omitempty"`
	// WaitingForVersion is the graph hash of a run whose version is not registered on the
	// process that last picked it up; "" otherwise. Message then says so in words
	// (VersionUnavailableMessage). The run continues when a process that has the version
	// picks it up.
	WaitingForVersion string `json:"waiting_for_version,omitempty"`
	// Message explains WaitingForVersion.
	Message string `json:"message,omitempty"`
}

// RunResult is the output of a completed run, with the final state decoded into S.
type RunResult[S any] struct {
	// GraphName is the run's graph.
	GraphName string `json:"graph_name"`
	// GraphVersion is the version of the graph the run ran on.
	GraphVersion string `json:"graph_version"`
	// GraphHash is the hash of that version.
	GraphHash string `json:"graph_hash"`
	// FinalNode is the node whose visit completed the run.
	FinalNode string `json:"final_node"`
	// State is the final state.
	State S `json:"state"`
}

// ErrRunNotCompleted is returned by DecodeOutput for a run that is not Completed.
var ErrRunNotCompleted = errors.New("engine: run not completed")

// Progress decodes the custom status. ok is false while the run is Pending (null custom
// status, unless it waits for its graph version) or when the custom status is not the
// engine's object.
func (r Run) Progress() (p RunProgress, ok bool) {
	if len(r.CustomStatus) == 0 || string(r.CustomStatus) == "null" {
		return RunProgress{}, false
	}
	if err := json.Unmarshal(r.CustomStatus, &p); err != nil {
		return RunProgress{}, false
	}
	return p, true
}

// WaitingFor returns the event a Running run waits for, and false when it does not wait.
func (r Run) WaitingFor() (event string, ok bool) {
	if r.RuntimeStatus != StatusRunning {
		return "", false
	}
	p, _ := r.Progress()
	return p.WaitingForEvent, p.WaitingForEvent != ""
}

// WaitingForVersion returns the graph hash an unfinished run waits for: its version is not
// registered on the process that last picked it up. ok is false otherwise.
func (r Run) WaitingForVersion() (graphHash string, ok bool) {
	if r.RuntimeStatus.Finished() {
		return "", false
	}
	p, _ := r.Progress()
	return p.WaitingForVersion, p.WaitingForVersion != ""
}

// FailureMessage returns the failure text of a Failed run, or the reason of a Terminated
// one; "" otherwise.
func (r Run) FailureMessage() string {
	if r.RuntimeStatus != StatusFailed && r.RuntimeStatus != StatusTerminated {
		return ""
	}
	var s string
	if json.Unmarshal(r.Output, &s) != nil {
		return ""
	}
	return s
}

// DecodeOutput decodes a Completed run's output, its final state into S. Other statuses
// return an error wrapping ErrRunNotCompleted (use FailureMessage for a failure's text).
func DecodeOutput[S any](r Run) (RunResult[S], error) {
	var out RunResult[S]
	if r.RuntimeStatus != StatusCompleted {
		return out, fmt.Errorf("decode output of run %s (status %s): %w", r.InstanceID, r.RuntimeStatus, ErrRunNotCompleted)
	}
	if err := json.Unmarshal(r.Output, &out); err != nil {
		return out, fmt.Errorf("decode output of run %s: %w", r.InstanceID, err)
	}
	return out, nil
}

// DecodeState decodes a Completed run's final state into S (DecodeOutput's State).
func DecodeState[S any](r Run) (S, error) {
	out, err := DecodeOutput[S](r)
	return out.State, err
}
