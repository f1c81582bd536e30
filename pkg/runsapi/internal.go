package runsapi

import (
	"context"
	"errors"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Internal graphs (durable.Registry.RegisterInternal) are the engine's own business: the
// service answers for them and their runs exactly as for a graph or a run that does not exist.
// With no internal graph registered none of these checks costs a read.

// publicRun returns ErrRunNotFound for a run of an internal graph, else nil.
func (s *Service) publicRun(run engine.Run) error {
	if s.reg.Internal(run.GraphName) {
		return engine.ErrRunNotFound
	}
	return nil
}

// checkPublicRun reads run id when internal graphs are registered and returns
// ErrRunNotFound for an unknown run or a run of an internal graph.
func (s *Service) checkPublicRun(ctx context.Context, id string) error {
	if !s.reg.HasInternal() {
		return nil
	}
	run, err := s.runs.GetRun(ctx, id)
	if err != nil {
		return err
	}
	return s.publicRun(run)
}

// checkStartID refuses to start a run whose requested id is that of a run of an internal
// graph: the engine would replace a finished one. It answers as for any existing run
// (*engine.RunExistsError, 409).
func (s *Service) checkStartID(ctx context.Context, id string) error {
	if id == "" || !s.reg.HasInternal() {
		return nil
	}
	run, err := s.runs.GetRun(ctx, id)
	switch {
	case errors.Is(err, engine.ErrRunNotFound):
		return nil
	case err != nil:
		return err
	case s.reg.Internal(run.GraphName):
		return &engine.RunExistsError{InstanceID: id, Status: run.Status}
	}
	return nil
}

// publicRuns drops the runs of internal graphs from a page. The page may then hold fewer runs
// than its limit, or none, and still carry a continuation token.
func (s *Service) publicRuns(runs []engine.Run) []engine.Run {
	if !s.reg.HasInternal() {
		return runs
	}
	out := runs[:0:0]
	for _, r := range runs {
		if !s.reg.Internal(r.GraphName) {
			out = append(out, r)
		}
	}
	return out
}
