package durabletest

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// RunNotFailedError refuses a rewind of a run that is not Failed (TryRewind).
type RunNotFailedError = engine.RunNotFailedError

// Rewind rewinds the Failed run id from the step that failed (engine.Engine.RewindRun) and
// drives it until it waits or finishes, as Start does: the failed step runs again with fresh
// attempts, committed steps do not. A retry's back-off on the way waits for Advance. It
// returns the run's status; a run that is not Failed fails the test (TryRewind returns the
// refusal).
func (k *Kit[S]) Rewind(id string) Run {
	k.t.Helper()
	run, err := k.TryRewind(id, "")
	if err != nil {
		k.t.Fatalf("durabletest: %v", err)
	}
	return run
}

// TryRewind is Rewind with the reason recorded in the run's history (its run_rewound row), for
// a rewind the test expects to be refused: it returns *RunNotFailedError for a run that is not
// Failed and ErrRunNotFound for an unknown one, and then drives nothing.
func (k *Kit[S]) TryRewind(id, reason string) (Run, error) {
	k.t.Helper()
	if err := k.current().eng.RewindRun(context.Background(), id, reason); err != nil {
		return Run{}, fmt.Errorf("rewind %s: %w", id, err)
	}
	k.Drive()
	return k.Run(id), nil
}
