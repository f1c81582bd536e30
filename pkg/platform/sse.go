package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// SSE frames of the platform streams.
const (
	platformEndFrame    = "event: end\ndata: null\n\n"
	platformFailedFrame = "event: error\ndata: {\"error\": \"stream processing failed\"}\n\n"
)

// frames collects the frames of one platform stream. The metadata frame and accepted data
// frames never total more than max bytes; the error and end frames are never counted.
type frames struct {
	max    int
	event  string
	cancel context.CancelFunc

	mu       sync.Mutex
	buf      []byte // guarded by mu
	total    int    // guarded by mu
	closed   bool   // guarded by mu
	overflow bool   // guarded by mu
	err      error  // guarded by mu
}

func newFrames(maxBytes int, mode, runID string, cancel context.CancelFunc) *frames {
	f := &frames{max: maxBytes, event: mode, cancel: cancel}
	meta := "event: metadata\ndata: {\"run_id\": \"" + runID + "\"}\n\n"
	f.buf, f.total = append(f.buf, meta...), len(meta)
	return f
}

// emit is the graph's callback.
func (f *frames) emit(chunk any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		if f.overflow {
			return host.ErrStreamOverflow
		}
		return errors.New("platform: stream is closed")
	}
	data, err := encodeOutput(chunk, "data")
	if err != nil {
		f.fail(fmt.Errorf("encode stream event: %w", err))
		return f.err
	}
	frame := make([]byte, 0, len(f.event)+len(data)+16)
	frame = append(append(append(append(frame, "event: "...), f.event...), "\ndata: "...), data...)
	frame = append(frame, "\n\n"...)
	if f.total+len(frame) > f.max {
		f.overflow = true
		f.fail(host.ErrStreamOverflow)
		return host.ErrStreamOverflow
	}
	f.total += len(frame)
	f.buf = append(f.buf, frame...)
	return nil
}

func (f *frames) fail(err error) {
	if f.err == nil {
		f.err = err
	}
	f.closed = true
	f.cancel()
}

// finish closes the stream with the graph's result and appends the terminal frames. It
// returns the run's failure (nil on success).
func (f *frames) finish(runErr error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if runErr != nil && f.err == nil && !errors.Is(runErr, host.ErrStreamOverflow) {
		f.err = runErr
	}
	var failure error
	switch {
	case f.overflow:
		f.buf = append(f.buf, "event: error\ndata: {\"error\": \"stream response exceeded max buffered size ("+strconv.Itoa(f.max)+" bytes)\"}\n\n"...)
		failure = host.ErrStreamOverflow
	case f.err != nil:
		f.buf = append(f.buf, platformFailedFrame...)
		failure = f.err
	}
	f.buf = append(f.buf, platformEndFrame...)
	return failure
}

// stream runs g's Stream and returns the SSE body and the run's failure.
func (s *Service) stream(ctx context.Context, g host.StreamableGraph, req *RunRequest, tid, runID string) ([]byte, error) {
	ctx, cancel := context.WithCancel(withRunContext(ctx, req.Context))
	defer cancel()
	f := newFrames(s.maxStream, req.StreamMode, runID, cancel)
	_, err := guardValue(func() (struct{}, error) { return struct{}{}, g.Stream(ctx, graphRequest(req, tid), f.emit) })
	return f.buf, f.finish(err)
}

func (s *Service) writeSSE(w http.ResponseWriter, tid, runID string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Content-Location", s.contentLocation(tid, runID))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (s *Service) serveThreadRunStream(w http.ResponseWriter, r *http.Request) {
	tid, req, g, err := s.admitThreaded(r, true)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	if err := s.lockThread(r.Context(), tid, req); err != nil {
		writeError(w, err, s.logger)
		return
	}
	runID := uuid.NewString()
	body, err := s.stream(r.Context(), g.(host.StreamableGraph), req, tid, runID)
	status := threads.StatusIdle
	if err != nil {
		status = threads.StatusError
		if !errors.Is(err, host.ErrStreamOverflow) {
			s.logger.Error("stream processing failed", "graph", req.AssistantID, "thread_id", tid, "run_id", runID, "error", err)
		}
	}
	_ = s.releaseThread(r.Context(), tid, status, nil)
	s.writeSSE(w, tid, runID, body)
}

func (s *Service) serveThreadlessStream(w http.ResponseWriter, r *http.Request) {
	req, g, err := s.admitThreadless(r, true)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	runID := uuid.NewString()
	body, err := s.stream(r.Context(), g.(host.StreamableGraph), req, "", runID)
	if err != nil && !errors.Is(err, host.ErrStreamOverflow) {
		s.logger.Error("stream processing failed", "graph", req.AssistantID, "run_id", runID, "error", err)
	}
	s.writeSSE(w, "", runID, body)
}
