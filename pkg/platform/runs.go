package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// lockThread takes the run lock of a thread through the store (platform runs do not use the
// host's thread lock).
func (s *Service) lockThread(ctx context.Context, tid string, req *RunRequest) error {
	t, err := s.store.Acquire(ctx, tid, req.AssistantID, req.Metadata, s.now())
	var be *threads.BoundError
	switch {
	case err == nil:
		req.owner = s.threadOwner(t)
		return nil
	case errors.Is(err, threads.ErrThreadNotFound):
		return threadNotFound(tid)
	case errors.As(err, &be):
		return apierror.Newf(apierror.ErrConflict, "Thread %s is bound to assistant %s, cannot run with %s", repr(tid), repr(be.Bound), repr(be.Requested))
	case errors.Is(err, threads.ErrThreadBusy):
		return apierror.Newf(apierror.ErrConflict, "Thread %s is already busy. Concurrent runs are not supported (multitask_strategy=reject).", repr(tid))
	case errors.Is(err, threads.ErrTooLarge):
		return storeErrorPublic(err)
	}
	return fmt.Errorf("acquire thread %q: %w", tid, err)
}

// releaseThread ends a run on a thread; a release that fails is logged (the stale-lock sweep
// resets the thread) and reported.
func (s *Service) releaseThread(ctx context.Context, tid string, status threads.Status, values json.RawMessage) error {
	err := s.store.Release(context.WithoutCancel(ctx), tid, status, values, s.now())
	if (errors.Is(err, threads.ErrTooLarge) || errors.Is(err, threads.ErrStorageFull)) && values != nil {
		s.logger.Error("run output does not fit the thread record", "thread_id", tid)
		_ = s.store.Release(context.WithoutCancel(ctx), tid, threads.StatusError, nil, s.now())
	}
	if err != nil {
		s.logger.Error("release thread", "thread_id", tid, "error", err)
	}
	s.wakeRuns(tid)
	return err
}

// graphRequest builds what the graph receives.
func graphRequest(req *RunRequest, tid string) host.Request {
	cfg := req.Config
	if tid != "" {
		cfg = threadedConfig(cfg, tid)
	}
	return host.Request{Input: req.Input, Config: host.Config{ThreadID: tid, Raw: cfg}, StreamMode: graphMode(req.StreamMode)}
}

// invoke runs the graph to completion and returns its output as the wait body: an object as
// is, anything else as {"result": <value>}, json.dumps style.
func invoke(ctx context.Context, g host.InvocableGraph, req *RunRequest, tid string) ([]byte, error) {
	ctx = withOwner(withResume(withRunContext(ctx, req.Context), req.Resume), req.owner)
	out, err := guardValue(func() (any, error) { return g.Invoke(ctx, graphRequest(req, tid)) })
	if err != nil {
		return nil, err
	}
	return encodeOutput(out, "result")
}

// encodeOutput renders v in json.dumps style: an object as is, anything else wrapped as
// {"<key>": <value>} keeping its JSON type (as is when key is "").
func encodeOutput(v any, key string) ([]byte, error) {
	var compact []byte
	if raw, ok := v.(json.RawMessage); ok {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("compact output: %w", err)
		}
		compact = buf.Bytes()
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("encode output: %w", err)
		}
		compact = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	if kindOf(compact) == 'o' || key == "" {
		return pyjson.AppendReformat(nil, compact), nil
	}
	out := append([]byte(`{"`+key+`": `), pyjson.AppendReformat(nil, compact)...)
	return append(out, '}'), nil
}

// contentLocation is the Content-Location of a run.
func (s *Service) contentLocation(tid, runID string) string {
	if tid == "" {
		return s.prefix + "/runs/" + runID
	}
	return s.prefix + "/threads/" + tid + "/runs/" + runID
}

func (s *Service) serveThreadRunWait(w http.ResponseWriter, r *http.Request) {
	tid, req, g, err := s.admitThreaded(r, false)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	if err := s.lockThread(r.Context(), tid, req); err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.runWait(w, r, g, req, tid, func(context.Context) {})
}

// runWait runs a wait run within the wait bound and answers its output, its failure, or,
// when the bound passed first, 504 while the run goes on. A threaded run releases its thread
// when it ends, storing its output as the thread's values; then end runs.
func (s *Service) runWait(w http.ResponseWriter, r *http.Request, g host.InvocableGraph, req *RunRequest, tid string, end func(context.Context)) {
	runID := uuid.NewString()
	var body []byte
	var runErr error
	finished := waitbound.Run(r.Context(), s.maxWait, func(ctx context.Context) {
		ctx, oc := withOutcome(ctx)
		body, runErr = invoke(ctx, g, req, tid)
		if runErr != nil {
			s.logger.Error("graph execution failed", "graph", req.AssistantID, "thread_id", tid, "run_id", runID, "error", runErr)
		}
		switch {
		case tid == "":
		case runErr != nil:
			_ = s.releaseThread(ctx, tid, threads.StatusError, nil)
		default:
			_ = s.releaseThread(ctx, tid, oc.status(nil), oc.valuesOr(body))
		}
		end(ctx)
	})
	switch {
	case !finished:
		s.logWaitExceeded(req, tid, runID)
		s.writeWaitExceeded(w, req.locationThread(tid), runID)
	case runErr != nil:
		writeError(w, graphFailure(runErr), s.logger)
	default:
		s.writeWait(w, r, req.locationThread(tid), runID, body)
	}
}

// writeWait answers a wait run's output, counted in the request's answer (respond.go).
func (s *Service) writeWait(w http.ResponseWriter, r *http.Request, tid, runID string, body []byte) {
	w.Header().Set("Content-Location", s.contentLocation(tid, runID))
	s.writeEncoded(w, r, http.StatusOK, body)
}

// admitThreaded runs the checks of a threaded run up to the run lock: thread id, parse chain,
// thread exists (or, with if_not_exists create, is created), assistant, depth and nodes,
// (stream) streaming.
func (s *Service) admitThreaded(r *http.Request, stream bool) (string, *RunRequest, host.InvocableGraph, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return "", nil, nil, err
	}
	req, err := s.parseRun(r, threadedRun)
	if err != nil {
		return "", nil, nil, err
	}
	_, missing, err := s.runThread(r.Context(), tid, req)
	if err != nil {
		return "", nil, nil, err
	}
	g, err := s.admitGraph(req, stream)
	if err != nil {
		return "", nil, nil, err
	}
	if missing {
		if _, err := s.createMissing(r.Context(), tid); err != nil {
			return "", nil, nil, err
		}
	}
	return tid, req, g, nil
}

// runThread returns the run's thread. A missing one is 404, unless the run says
// if_not_exists create: then missing is true and the caller creates it (createMissing) once
// the run passed its other checks.
func (s *Service) runThread(ctx context.Context, tid string, req *RunRequest) (t threads.Thread, missing bool, err error) {
	req.Metadata = s.ownedMetadata(ctx, req.Metadata)
	t, err = s.store.Get(ctx, tid)
	if errors.Is(err, threads.ErrThreadNotFound) && req.IfNotExists == "create" {
		return t, true, nil
	}
	if err == nil && !s.owns(ctx, t) {
		return threads.Thread{}, false, threadNotFound(tid)
	}
	return t, false, storeError(err, tid)
}

// createMissing creates the thread of an if_not_exists create run, after the claim check of
// every named thread id (checkClaim: 409 for an id whose state a graph still keeps); a
// concurrent create of the same id is fine.
func (s *Service) createMissing(ctx context.Context, tid string) (threads.Thread, error) {
	if err := s.checkClaim(ctx, tid); err != nil {
		return threads.Thread{}, err
	}
	t, err := s.newThread(ctx, tid, s.ownedMetadata(ctx, nil))
	if errors.Is(err, threads.ErrThreadExists) {
		return s.visibleThread(ctx, tid)
	}
	return t, storeErrorPublic(err)
}

// newThread stores a new idle thread.
func (s *Service) newThread(ctx context.Context, tid string, meta map[string]any) (threads.Thread, error) {
	now := s.now().UTC()
	t := threads.Thread{ThreadID: tid, CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle, Metadata: meta}
	return t, s.store.Create(ctx, t)
}

// admitGraph checks the assistant (404), the depth and nodes of input and config (400) and,
// for a stream, that the graph streams (501).
func (s *Service) admitGraph(req *RunRequest, stream bool) (host.InvocableGraph, error) {
	g, ok := s.graph(req.AssistantID)
	if !ok {
		return nil, apierror.Newf(apierror.ErrNotFound, "Assistant %s not found", repr(req.AssistantID))
	}
	if err := s.checkRunLimits(req); err != nil {
		return nil, err
	}
	if stream {
		if _, ok := g.(host.StreamableGraph); !ok {
			return nil, apierror.Newf(apierror.ErrNotImplemented, "Graph %s does not support streaming", repr(req.AssistantID))
		}
	}
	return g, nil
}

// admitThreadless runs the checks of a threadless run: parse chain, assistant, depth and
// nodes, (stream) streaming, and no thread_id in the config. A graph with a checkpointer runs
// on a temporary thread, created and locked here: the returned thread id is "" otherwise.
func (s *Service) admitThreadless(r *http.Request, stream bool) (string, *RunRequest, host.InvocableGraph, error) {
	req, err := s.parseRun(r, threadlessRun)
	if err != nil {
		return "", nil, nil, err
	}
	g, err := s.admitGraph(req, stream)
	if err != nil {
		return "", nil, nil, err
	}
	if hasThreadID(req.Config) {
		return "", nil, nil, apierror.New(apierror.ErrValidation, "thread_id is not allowed on threadless runs")
	}
	if !hasCheckpointer(g) {
		return "", req, g, nil
	}
	tid := uuid.NewString()
	req.temporary = true
	req.Metadata = s.ownedMetadata(r.Context(), req.Metadata)
	if _, err := s.newThread(r.Context(), tid, s.ownedMetadata(r.Context(), nil)); err != nil {
		return "", nil, nil, storeErrorPublic(err)
	}
	if err := s.lockThread(r.Context(), tid, req); err != nil {
		s.endTemporary(r.Context(), tid, req)
		return "", nil, nil, err
	}
	return tid, req, g, nil
}

// endTemporary deletes a threadless run's temporary thread unless the run asked to keep it.
func (s *Service) endTemporary(ctx context.Context, tid string, req *RunRequest) {
	if !req.temporary || req.OnCompletion == "keep" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.store.Delete(ctx, tid); err != nil {
		s.logger.Error("delete temporary thread", "thread_id", tid, "error", err)
	}
	if d, ok := s.graph(req.AssistantID); ok {
		if d, ok := d.(ThreadDeleter); ok {
			if err := d.DeleteThread(ctx, tid); err != nil {
				s.logger.Error("delete temporary thread checkpoints", "thread_id", tid, "graph", req.AssistantID, "error", err)
			}
		}
	}
}

func (s *Service) serveThreadlessWait(w http.ResponseWriter, r *http.Request) {
	tid, req, g, err := s.admitThreadless(r, false)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.runWait(w, r, g, req, tid, func(ctx context.Context) { s.endTemporary(ctx, tid, req) })
}

// guardValue runs fn, turning a panic into a *host.PanicError.
func guardValue[T any](fn func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &host.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn()
}
