package platform

import (
	"context"
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// Bounded waits (docs/http-platform.md, "Bounded waits"). Every route that waits for a run
// waits at most the hosting app's MaxWait (host.Options.MaxWait), below the Azure front
// end's 230 s cut:
//
//   - runs/wait (threaded or not) runs the graph in the request: past the bound it answers
//     504 {"detail": "Graph run did not finish within <n> s; it goes on in the background"}
//     and the run goes on in the process (a threaded run then releases its thread, storing
//     its output as the thread's values, when it ends).
//   - runs/stream answers 200 with the frames so far, then an error frame with the same
//     text (lower-cased first letter) and the end frame; the run goes on.
//   - join and cancel with wait=1 wait for a background run, which is durable: past the bound
//     they answer 202 Accepted with the run (runs.get's body), a Location to poll (join: the
//     join URL itself; cancel: the run) and Retry-After.

// retryAfterSeconds is the Retry-After of a 202 answered because the wait bound passed.
const retryAfterSeconds = "5"

// errWaitBound is the cause of a wait's context that reached the bound.
var errWaitBound = errors.New("platform: wait bound passed")

// waitContext returns ctx bounded by the wait bound. The server's shutdown ends it as the
// bound does (funchost.UntilDrain): the run goes on, and the client joins again elsewhere.
func (s *Service) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	drained, stop := funchost.UntilDrain(ctx, errWaitBound)
	bounded, cancel := context.WithTimeoutCause(drained, s.maxWait, errWaitBound)
	return bounded, func() { cancel(); stop() }
}

// boundPassed reports whether err ended a wait on ctx (from waitContext) because the bound
// passed or the server began to shut down, not because the request ended or the backend
// failed otherwise.
func boundPassed(ctx context.Context, err error) bool {
	return err != nil && errors.Is(context.Cause(ctx), errWaitBound) &&
		(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// logWaitExceeded records an inline run whose request stopped waiting for it.
func (s *Service) logWaitExceeded(req *RunRequest, tid, runID string) {
	s.logger.Warn("graph run passed the wait bound; answered without it", "graph", req.AssistantID,
		"thread_id", tid, "run_id", runID, "max_wait", s.maxWait)
}

// writeWaitExceeded answers a runs/wait whose graph run passed the bound: 504.
func (s *Service) writeWaitExceeded(w http.ResponseWriter, tid, runID string) {
	w.Header().Set("Content-Location", s.contentLocation(tid, runID))
	writeError(w, apierror.WaitExceeded(s.maxWait), s.logger)
}

// writePending answers a wait on a background run that passed the bound: 202 with the run,
// Location (poll it: join again, or the run), Content-Location (the run) and Retry-After.
func (s *Service) writePending(w http.ResponseWriter, r *http.Request, tid, rid, location string) {
	run, err := s.runs.Get(r.Context(), tid, rid)
	if err != nil {
		writeError(w, runError(err, rid), s.logger)
		return
	}
	h := w.Header()
	h.Set("Location", location)
	h.Set("Content-Location", s.contentLocation(tid, rid))
	h.Set("Retry-After", retryAfterSeconds)
	s.writeJSON(w, r, http.StatusAccepted, wireRun(run))
}
