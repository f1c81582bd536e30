package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

var _ RunExecutor = (*Service)(nil)

// ExecuteRun implements RunExecutor.
func (s *Service) ExecuteRun(ctx context.Context, run Run) (RunStatus, error) {
	tid, req := run.ThreadID, &run.Request
	g, ok := s.graph(req.AssistantID)
	if !ok {
		s.logger.Error("background run: assistant not found", "graph", req.AssistantID, "run_id", run.RunID)
		return RunError, nil
	}
	t, err := s.store.Acquire(ctx, tid, req.AssistantID, req.Metadata, s.now())
	if err != nil {
		if errors.Is(err, threads.ErrThreadBusy) {
			return "", ErrRetryLater
		}
		s.logger.Error("background run: thread not runnable", "thread_id", tid, "run_id", run.RunID, "error", err)
		return RunError, nil
	}
	req.owner = s.threadOwner(t)
	ctx = s.onBehalfOf(ctx, t)
	l := s.openRunLog(ctx, run)
	ctx, oc := withOutcome(ctx)
	body, err := executeRun(ctx, g, req, tid, l)
	status := RunSuccess
	switch {
	case err != nil && ctx.Err() != nil:
		_ = s.releaseThread(ctx, tid, threads.StatusIdle, nil)
		status = RunInterrupted
	case err != nil:
		s.logger.Error("graph execution failed", "graph", req.AssistantID, "thread_id", tid, "run_id", run.RunID, "error", err)
		_ = s.releaseThread(ctx, tid, threads.StatusError, nil)
		status = RunError
	case s.releaseThread(ctx, tid, oc.status(nil), oc.valuesOr(body)) != nil:
		status = RunError
	case oc.interrupted:
		status = RunInterrupted
	}
	l.end(status == RunError)
	s.closeRunLog(l)
	return status, nil
}

// onBehalfOf marks the context of a background run on thread t as its owner's work
// (membudget.NewWork), as a request of the owner's is: the backend's workers run it outside
// any request, yet what it stores in memory (checkpoints, its stream) counts against the
// thread's owner, and the checkpointer's bounds forget that owner's oldest threads, not
// anyone else's. A thread without an owner (isolation off, or the master key's) is nobody's.
func (s *Service) onBehalfOf(ctx context.Context, t threads.Thread) context.Context {
	return membudget.NewWork(ctx, s.threadOwner(t))
}

// executeRun runs a background run's graph, its events of the run's stream modes into l,
// and returns its output. A ModeStreamer runs StreamModes in the run's modes and "values":
// its output is its last "values" event (nil without one: the thread's values stay). Any
// other graph runs Invoke, and its output is the stream's one "values" event.
func executeRun(ctx context.Context, g host.InvocableGraph, req *RunRequest, tid string, l *runLog) ([]byte, error) {
	modes := graphModes(req.modes())
	m, ok := g.(ModeStreamer)
	if !ok {
		body, err := invoke(ctx, g, req, tid)
		if err == nil && slices.Contains(modes, "values") {
			err = l.emit("values", json.RawMessage(body))
		}
		return body, err
	}
	ask := modes
	if !slices.Contains(ask, "values") {
		ask = append(slices.Clip(ask), "values")
	}
	var last any
	seen := false
	ctx = withOwner(withResume(withRunContext(ctx, req.Context), req.Resume), req.owner)
	_, err := guardValue(func() (struct{}, error) {
		return struct{}{}, m.StreamModes(ctx, graphRequest(req, tid), ask, func(mode string, chunk any) error {
			if mode == "values" {
				last, seen = chunk, true
			}
			if !slices.Contains(modes, mode) {
				return nil
			}
			return l.emit(eventName(mode), chunk)
		})
	})
	if err != nil || !seen {
		return nil, err
	}
	return encodeOutput(last, "result")
}

// boundConflict reports (as a 409) a thread bound to another assistant, so an enqueued run
// does not wait forever for a thread it can never take.
func (s *Service) boundConflict(ctx context.Context, tid string, req *RunRequest) error {
	t, err := s.store.Get(ctx, tid)
	if err != nil {
		return err
	}
	if t.AssistantID != "" && t.AssistantID != req.AssistantID {
		return apierror.Newf(apierror.ErrConflict, "Thread %s is bound to assistant %s, cannot run with %s", repr(tid), repr(t.AssistantID), repr(req.AssistantID))
	}
	return nil
}

func (s *Service) serveRunCreate(w http.ResponseWriter, r *http.Request) {
	run, err := s.createRun(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	w.Header().Set("Content-Location", s.contentLocation(run.ThreadID, run.RunID))
	s.writeJSON(w, r, http.StatusOK, wireRun(run))
}

// createRun checks a background run like a threaded wait (thread, assistant, limits, the
// binding, and for reject a busy thread or queued runs), then submits it.
func (s *Service) createRun(r *http.Request) (Run, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return Run{}, err
	}
	req, err := s.parseRun(r, backgroundRun)
	if err != nil {
		return Run{}, err
	}
	t, missing, err := s.runThread(r.Context(), tid, req)
	if err != nil {
		return Run{}, err
	}
	if _, err := s.admitGraph(req, false); err != nil {
		return Run{}, err
	}
	if missing {
		if t, err = s.createMissing(r.Context(), tid); err != nil {
			return Run{}, err
		}
	}
	if err := s.boundConflict(r.Context(), tid, req); err != nil {
		return Run{}, storeError(err, tid)
	}
	if req.MultitaskStrategy == "reject" {
		active, err := s.runs.Active(r.Context(), tid)
		if err != nil {
			return Run{}, fmt.Errorf("check active runs: %w", err)
		}
		if active || t.Status == threads.StatusBusy {
			return Run{}, apierror.Newf(apierror.ErrConflict, "Thread %s is already busy. Concurrent runs are not supported (multitask_strategy=reject).", repr(tid))
		}
	}
	now := s.now().UTC()
	run := Run{RunID: uuid.NewString(), ThreadID: tid, CreatedAt: now, UpdatedAt: now, Status: RunPending, Request: *req}
	if err := s.runs.Submit(r.Context(), run); err != nil {
		return Run{}, fmt.Errorf("submit run: %w", err)
	}
	return run, nil
}

// runError maps the backend's errors.
func runError(err error, runID string) error {
	switch {
	case errors.Is(err, ErrRunNotFound):
		return apierror.Newf(apierror.ErrNotFound, "Run %s not found", repr(runID))
	case errors.Is(err, ErrRunFinished):
		return apierror.Newf(apierror.ErrConflict, "Run %s is already finished", repr(runID))
	}
	return err
}

// pathRun returns the path's thread id (400) and run id.
func pathRun(r *http.Request) (string, string, error) {
	tid, err := pathThreadID(r)
	return tid, r.PathValue("run_id"), err
}

func (s *Service) serveRunGet(w http.ResponseWriter, r *http.Request) {
	tid, rid, err := pathRun(r)
	if err == nil {
		err = s.checkThread(r.Context(), tid)
	}
	if err == nil {
		var run Run
		if run, err = s.runs.Get(r.Context(), tid, rid); err == nil {
			s.writeJSON(w, r, http.StatusOK, wireRun(run))
			return
		}
		err = runError(err, rid)
	}
	writeError(w, err, s.logger)
}

func (s *Service) serveRunList(w http.ResponseWriter, r *http.Request) {
	out, err := s.listRuns(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *Service) listRuns(r *http.Request) ([]runBody, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	limit, offset := 10, 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return nil, apierror.Invalid("limit", "Input should be an integer greater than or equal to 1")
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return nil, apierror.Invalid("offset", "Input should be an integer greater than or equal to 0")
		}
	}
	if _, err := s.visibleThread(r.Context(), tid); err != nil {
		return nil, err
	}
	runs, err := s.runs.List(r.Context(), tid, RunStatus(q.Get("status")), limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]runBody, 0, len(runs))
	for _, run := range runs {
		out = append(out, wireRun(run))
	}
	return out, nil
}

// serveRunJoin waits for the run and answers the thread's values (the run's output when it
// succeeded); past the wait bound it answers 202 with the run and Location: the join URL.
func (s *Service) serveRunJoin(w http.ResponseWriter, r *http.Request) {
	tid, rid, err := pathRun(r)
	if err == nil {
		err = s.checkThread(r.Context(), tid)
	}
	if err == nil {
		ctx, cancel := s.waitContext(r.Context())
		defer cancel()
		if _, err = s.runs.Join(ctx, tid, rid); err == nil {
			var t threads.Thread
			if t, err = s.store.Get(r.Context(), tid); err == nil {
				s.writeEncoded(w, r, http.StatusOK, rawOrEmpty(t.Values))
				return
			}
			err = storeError(err, tid)
		} else if boundPassed(ctx, err) {
			s.writePending(w, r, tid, rid, s.contentLocation(tid, rid)+"/join")
			return
		} else {
			err = runError(err, rid)
		}
	}
	writeError(w, err, s.logger)
}

// serveRunCancel cancels the run; with wait=1 it waits for the run to end, and past the wait
// bound answers 202 with the run and Location: the run.
func (s *Service) serveRunCancel(w http.ResponseWriter, r *http.Request) {
	tid, rid, err := pathRun(r)
	if err == nil {
		err = s.checkThread(r.Context(), tid)
	}
	if err == nil {
		q := r.URL.Query()
		ctx, cancel := s.waitContext(r.Context())
		defer cancel()
		if a := q.Get("action"); a != "" && a != "interrupt" {
			err = apierror.Newf(apierror.ErrNotImplemented, "Cancel action %s is not supported; only 'interrupt' is available.", repr(a))
		} else if err = s.runs.Cancel(ctx, tid, rid, q.Get("wait") == "1" || q.Get("wait") == "true"); err == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		} else if boundPassed(ctx, err) {
			s.writePending(w, r, tid, rid, s.contentLocation(tid, rid))
			return
		} else {
			err = runError(err, rid)
		}
	}
	writeError(w, err, s.logger)
}
