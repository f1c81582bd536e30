package runsapi

import (
	"context"
	"errors"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// Internal graphs (durable.Registry.RegisterInternal) are the engine's own business: the
// service answers for them and their runs exactly as for a graph or a run that does not exist.
// With no internal graph registered none of these checks costs a read.

// publicRun returns ErrRunNotFound for a run of an internal graph, or of another identity
// than the caller's with isolation on (isolation.go), else nil.
func (s *Service) publicRun(ctx context.Context, run engine.Run) error {
	if s.reg.Internal(run.GraphName) || !s.owns(ctx, run) {
		return engine.ErrRunNotFound
	}
	return nil
}

// checkPublicRun reads run id when internal graphs are registered or isolation is on, and
// returns ErrRunNotFound for an unknown run or one publicRun refuses.
func (s *Service) checkPublicRun(ctx context.Context, id string) error {
	if !s.reg.HasInternal() && s.opts.Isolation == nil {
		return nil
	}
	run, err := s.runs.GetRun(ctx, id)
	if err != nil {
		return err
	}
	return s.publicRun(ctx, run)
}

// checkStartID refuses to start a run whose requested id is that of a run of an internal
// graph, or of another identity's run with isolation on: the engine would replace a finished
// one. It answers as for any existing run (*engine.RunExistsError, 409).
func (s *Service) checkStartID(ctx context.Context, id string) error {
	if id == "" || !s.reg.HasInternal() && s.opts.Isolation == nil {
		return nil
	}
	run, err := s.runs.GetRun(ctx, id)
	switch {
	case errors.Is(err, engine.ErrRunNotFound):
		return nil
	case err != nil:
		return err
	case s.publicRun(ctx, run) != nil:
		// Ids are global, so the conflict itself cannot be hidden; what the run is (its
		// status) can.
		return &apierror.Error{Kind: apierror.ErrConflict, Message: "instance already exists",
			Fields: []apierror.Field{{Name: "instance_id", Value: id}}}
	}
	return nil
}

// publicRuns drops the runs publicRun refuses from a page: runs of internal graphs (the page
// may then hold fewer runs than its limit, or none, and still carry a continuation token).
// Under isolation a non-admin's page comes from the engine's owner index and holds the
// caller's runs only; the owner check here is a second line.
func (s *Service) publicRuns(ctx context.Context, runs []engine.Run) []engine.Run {
	if !s.reg.HasInternal() && s.opts.Isolation == nil {
		return runs
	}
	out := runs[:0:0]
	for _, r := range runs {
		if s.publicRun(ctx, r) == nil {
			out = append(out, r)
		}
	}
	return out
}
