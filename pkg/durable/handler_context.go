package durable

import (
	"context"
	"strconv"
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
	// Step is the step's sequence number within the run.
	Step int64
	// Attempt counts executions of this step, from 1.
	Attempt int
}

// IdempotencyKey returns "<run_id>:<generation>:<step>", stable across attempts of the same
// step and distinct for a later run that reuses the instance id: use it to deduplicate side
// effects.
func (s StepInfo) IdempotencyKey() string {
	return s.RunID + ":" + strconv.FormatInt(max(s.Generation, 1), 10) + ":" + strconv.FormatInt(s.Step, 10)
}

type stepInfoKey struct{}

// WithStepInfo returns a context carrying info.
func WithStepInfo(ctx context.Context, info StepInfo) context.Context {
	return context.WithValue(ctx, stepInfoKey{}, info)
}

// StepInfoFrom returns the StepInfo the engine stored in ctx, if any.
func StepInfoFrom(ctx context.Context) (StepInfo, bool) {
	info, ok := ctx.Value(stepInfoKey{}).(StepInfo)
	return info, ok
}
