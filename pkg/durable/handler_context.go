package durable

import (
	"context"
	"strconv"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// StepInfo identifies the step a handler runs in. The engine puts it in the context it passes
// to handlers. A step may run more than once (after a crash between doing the work and
// recording it); RunID and Step stay the same across such attempts, Attempt grows.
type StepInfo struct {
	// RunID is the run (instance) id.
	RunID string
	// Generation counts starts of this instance id: 1 for its first run, more when a
	// finished run was replaced by a new one with the same id. Zero reads as 1.
	Generation int64
	// Nonce is random per run: it tells apart runs that reuse an instance id after a purge
	// (which forgets the generation count). Empty outside the engine.
	Nonce string
	// Step is the step's sequence number within the run.
	Step int64
	// Attempt counts executions of this step, from 1.
	Attempt int
	// TimedOutWaitingFor is the event whose wait timed out and sent the run to this node (a
	// timeout node of RouteDecision.Within or GraphPolicy.WaitTimeoutNode); empty when
	// the node was reached otherwise.
	TimedOutWaitingFor string
	// Failure is the node failure whose failure route (WithFailureRoute) sent the run to this
	// node; nil when the node was reached otherwise.
	Failure *NodeFailure
	// Branch is 1 + the index of the fan-out branch the handler runs in (BranchFrom says
	// more), 0 outside a branch. Branches of one fan-out share their Step.
	Branch int
	// ChildRunID is the child run (StartChild) whose completion sent the run to this node;
	// empty when the node was reached otherwise.
	ChildRunID string
}

// ReachedByTimeout reports whether the node runs because a wait for an event timed out.
func (s StepInfo) ReachedByTimeout() bool { return s.TimedOutWaitingFor != "" }

// IdempotencyKey returns "<run_id>:<generation>:<step>", or "<run_id>:<generation>.<nonce>:<step>"
// when Nonce is set (always, under the engine), with ":b<index>" appended in a fan-out
// branch: stable across attempts of the same step and distinct for a later run that reuses
// the instance id, replaced or purged, and for each branch: use it to deduplicate side
// effects.
func (s StepInfo) IdempotencyKey() string {
	gen := strconv.FormatInt(max(s.Generation, 1), 10)
	if s.Nonce != "" {
		gen += "." + s.Nonce
	}
	key := s.RunID + ":" + gen + ":" + strconv.FormatInt(s.Step, 10)
	if s.Branch > 0 {
		key += ":b" + strconv.Itoa(s.Branch-1)
	}
	return key
}

// StepInfoFrom returns the StepInfo the engine stored in ctx, if any.
func StepInfoFrom(ctx context.Context) (StepInfo, bool) {
	if info, ok := graphrun.StepInfo(ctx).(*StepInfo); ok {
		return *info, true
	}
	return StepInfo{}, false
}
