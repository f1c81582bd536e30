package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// RunState is a run's current state and where it stands: what a client that follows a live
// run (waiting for an approval, sleeping, in a fan-out) or reads a finished one needs, without
// folding its history.
type RunState struct {
	// InstanceID is the run's id.
	InstanceID string
	// GraphName is the run's graph.
	GraphName string
	// RuntimeStatus is the run's status.
	RuntimeStatus RunStatus
	// State is the state after the run's last committed step: its initial state while no step
	// has committed, the final state once it completed, the state the failing step found when
	// it failed. A fan-out's branches enter it at their join.
	State json.RawMessage
	// Step counts the run's committed steps.
	Step int64
	// Generation counts the times the run continued as new; 0 for a run that never did.
	Generation int64
	// At is where the run stands.
	At RunPosition
}

// RunPosition is where a run stands: what runs next, or what it waits for. Only the members
// that apply are set; a finished run has none.
type RunPosition struct {
	// Nodes are the nodes about to run or running: the next node of a Pending or Running run
	// that does not wait, and in an open fan-out the nodes of the branches that have not
	// settled (each once, in branch order), or the join node once all have. Empty while the
	// run waits for an event or a child run, and once it is finished.
	Nodes []string
	// WaitingFor are the events the run waits for (durable.WaitForEvent), by name.
	WaitingFor []string
	// WaitDeadline is when the wait for WaitingFor times out; zero for a wait without one.
	WaitDeadline time.Time
	// WaitingForChild is the child run (durable.StartChild) the run waits for; "" otherwise.
	WaitingForChild string
	// SleepingUntil is when the run's durable sleep ends (durable.Sleep); zero when it does
	// not sleep, or the wake-up has passed by the engine's clock.
	SleepingUntil time.Time
	// Branches counts the branches of the run's open fan-out; nil without one.
	Branches *BranchCount
	// RetryAt is when a step that failed runs again: the current node's next attempt, or in
	// an open fan-out the earliest back-off of its branches; zero when none waits to retry
	// (or the back-off has passed by the engine's clock).
	RetryAt time.Time
}

// BranchCount counts the branches of an open fan-out.
type BranchCount struct {
	// Done counts the branches that settled (completed, or failed for good).
	Done int
	// Total is the fan-out's width.
	Total int
}

// RunStateReader is an optional capability of a Runs: reading a run's current state and
// where it stands. Engine implements it.
type RunStateReader interface {
	// RunState returns the run's current state and position. Errors: ErrRunNotFound, and the
	// store's.
	RunState(ctx context.Context, instanceID string) (RunState, error)
}

var _ RunStateReader = (*Engine)(nil)

// RunState implements RunStateReader. The head holds the state after the last committed step
// (whole, whatever the graph's reducers: history rows may record updates, the head never
// does), so the cost is bounded, whatever the length of the history: one point read of the
// head (+1 payload read when the state spilled to the payload store). A run with an open
// fan-out costs one query of its branches' completion rows (at most durable.MaxBranches rows),
// one point read of the fan-out's row (+1 payload read when it spilled) and one query of the
// branches' progress rows that back off. No history row is read otherwise.
func (e *Engine) RunState(ctx context.Context, instanceID string) (RunState, error) {
	if !ValidInstanceID(instanceID) {
		return RunState{}, ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return RunState{}, runLookupError(err)
	}
	state, err := e.loadState(ctx, h)
	if err != nil {
		return RunState{}, err
	}
	at, err := e.runPosition(ctx, h)
	if err != nil {
		return RunState{}, err
	}
	return RunState{
		InstanceID: h.runID, GraphName: h.graph, RuntimeStatus: h.status, State: state, Step: h.step,
		Generation: h.continued, At: at,
	}, nil
}

// runPosition returns where the run of h stands, as of the engine's clock.
func (e *Engine) runPosition(ctx context.Context, h *head) (RunPosition, error) {
	at := RunPosition{Nodes: []string{}, WaitingFor: []string{}}
	switch {
	case !h.active():
		return at, nil
	case h.branchCount > 0:
		return e.fanOutPosition(ctx, h, at)
	case h.childWait():
		at.WaitingForChild = h.waiting
		return at, nil
	case h.waiting != "":
		at.WaitingFor = append(at.WaitingFor, h.waiting)
		if h.waitDeadline > 0 {
			at.WaitDeadline = time.Unix(0, h.waitDeadline).UTC()
		}
		return at, nil
	}
	at.Nodes = append(at.Nodes, h.node)
	var r Run
	activity(&r, h, e.clock())
	at.SleepingUntil = r.SleepingUntil
	if r.NodeRetry != nil {
		at.RetryAt = r.NodeRetry.At
	}
	return at, nil
}

// fanOutPosition is runPosition of h, whose fan-out is open: the branches that settled, the
// nodes of those that have not (or the join node, h's, once all have), and the earliest
// back-off of a branch that retries.
func (e *Engine) fanOutPosition(ctx context.Context, h *head, at RunPosition) (RunPosition, error) {
	rows, err := e.completionRows(ctx, h, false)
	if err != nil {
		return at, err
	}
	at.Branches = &BranchCount{Done: len(rows), Total: int(h.branchCount)}
	if int64(len(rows)) >= h.branchCount {
		at.Nodes = append(at.Nodes, h.node)
		return at, nil
	}
	branches, err := e.regionBranches(ctx, h)
	if err != nil {
		return at, err
	}
	settled := make(map[int64]bool, len(rows))
	for _, r := range rows {
		settled[(parseSeq(r.RowKey)-h.branchBase)/BranchSlots] = true
	}
	for i, b := range branches {
		if !settled[int64(i)] && !slices.Contains(at.Nodes, b.Node) {
			at.Nodes = append(at.Nodes, b.Node)
		}
	}
	retries, err := e.branchRetries(ctx, h)
	if err != nil {
		return at, fmt.Errorf("read the position of run %s: %w", h.runID, err)
	}
	for _, r := range retries {
		if at.RetryAt.IsZero() || r.At.Before(at.RetryAt) {
			at.RetryAt = r.At
		}
	}
	return at, nil
}
