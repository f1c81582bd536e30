package platform

import (
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// serveStateAtCheckpoint answers POST threads/{id}/state/checkpoint, what the SDK's
// getState(threadId, checkpoint) and RemoteGraph.getState send: body {"checkpoint":
// Checkpoint, "subgraphs": bool}. Without a checkpoint_id it is GET threads/{id}/state;
// with one, the state view of that checkpoint from the graph's history (an unknown
// checkpoint answers the empty state, as an unknown thread does).
func (s *Service) serveStateAtCheckpoint(w http.ResponseWriter, r *http.Request) {
	st, err := s.stateAtCheckpoint(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, st)
}

func (s *Service) stateAtCheckpoint(r *http.Request) (threadStateBody, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return threadStateBody{}, err
	}
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return threadStateBody{}, err
	}
	obj, err := parseBody(body, emptyOKObject)
	if err != nil {
		return threadStateBody{}, err
	}
	ref, err := parseCheckpoint(obj, "checkpoint", tid, "Checkpoint")
	if err != nil {
		return threadStateBody{}, err
	}
	if ref == nil || ref.ID == "" {
		return s.latestState(r, tid)
	}
	g, err := s.resolveGraph(r, tid, "state history", func(g host.InvocableGraph) bool { _, ok := g.(StateHistorian); return ok })
	if err != nil {
		return threadStateBody{}, err
	}
	views, err := guardValue(func() ([]host.StateView, error) { return g.(StateHistorian).GetStateHistory(r.Context(), *ref) })
	switch {
	case errors.Is(err, host.ErrThreadNotFound) || (err == nil && len(views) == 0):
		return emptyState(tid), nil
	case err != nil:
		s.logger.Error("get thread state at a checkpoint", "thread_id", tid, "checkpoint_id", ref.ID, "error", err)
		return threadStateBody{}, apierror.New(apierror.ErrInternal, "Internal error retrieving thread state")
	}
	return s.renderState(views[0], tid)
}
