package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
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
	max   int
	event string

	// wake gets a signal when a frame is appended, for the request to send it.
	wake chan struct{}

	mu       sync.Mutex
	cancel   context.CancelFunc // cancels the graph; guarded by mu
	detached bool               // the request stopped waiting: events are dropped; guarded by mu
	buf      []byte             // guarded by mu
	total    int                // guarded by mu
	closed   bool               // guarded by mu
	overflow bool               // guarded by mu
	err      error              // guarded by mu
}

func newFrames(maxBytes int, mode, runID string) *frames {
	f := &frames{max: maxBytes, event: mode, wake: make(chan struct{}, 1)}
	meta := "event: metadata\ndata: {\"run_id\": \"" + runID + "\"}\n\n"
	f.buf, f.total = append(f.buf, meta...), len(meta)
	return f
}

// emit is the graph's callback: one frame named after the run's mode, verbatim.
func (f *frames) emit(chunk any) error { return f.write(f.event, chunk, "data") }

// emitMode is the callback of a several-mode run: one frame named after mode, as the SDK
// names them ("messages-tuple" events are named "messages"), its data the event as is (a
// messages pair stays an array).
func (f *frames) emitMode(mode string, chunk any) error {
	if mode == "messages-tuple" {
		mode = "messages"
	}
	return f.write(mode, chunk, "")
}

// write appends one data frame; with wrap set, an event that is not an object is wrapped as
// {"<wrap>": <event>}.
func (f *frames) write(mode string, chunk any, wrap string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.detached {
		return nil // nobody reads the frames any more; the run goes on to its end
	}
	if f.closed {
		if f.overflow {
			return host.ErrStreamOverflow
		}
		return errors.New("platform: stream is closed")
	}
	data, err := encodeOutput(chunk, wrap)
	if err != nil {
		f.fail(fmt.Errorf("encode stream event: %w", err))
		return f.err
	}
	frame := make([]byte, 0, len(mode)+len(data)+16)
	frame = append(append(append(append(frame, "event: "...), mode...), "\ndata: "...), data...)
	frame = append(frame, "\n\n"...)
	if f.total+len(frame) > f.max {
		f.overflow = true
		f.fail(host.ErrStreamOverflow)
		return host.ErrStreamOverflow
	}
	f.total += len(frame)
	f.buf = append(f.buf, frame...)
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return nil
}

// since returns a copy of the frames after the first n bytes.
func (f *frames) since(n int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.buf[min(n, len(f.buf)):])
}

func (f *frames) fail(err error) {
	if f.err == nil {
		f.err = err
	}
	f.closed = true
	if f.cancel != nil {
		f.cancel()
	}
}

// detach is called when the request stopped waiting for the run: it returns a copy of the
// frames so far, and from then on the graph's events are dropped, so the run goes on to its
// end.
func (f *frames) detach() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.detached = true
	return bytes.Clone(f.buf)
}

// finish closes the stream with the graph's result and appends the terminal frames (none
// once detached). It returns the run's failure (nil on success).
func (f *frames) finish(runErr error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.detached {
		f.buf = nil
		return runErr
	}
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

// stream runs g's Stream into f and returns the run's failure.
func (s *Service) stream(ctx context.Context, g host.StreamableGraph, req *RunRequest, tid string, f *frames) error {
	ctx, cancel := context.WithCancel(withOwner(withResume(withRunContext(ctx, req.Context), req.Resume), req.owner))
	defer cancel()
	f.mu.Lock()
	f.cancel = cancel
	f.mu.Unlock()
	_, err := guardValue(func() (struct{}, error) { return struct{}{}, streamModes(ctx, g, req, tid, f) })
	return f.finish(err)
}

// streamModes runs g's stream in the request's modes: one mode through Stream; several
// through ModeStreamer, or else Stream in the first mode with each event under every mode.
func streamModes(ctx context.Context, g host.StreamableGraph, req *RunRequest, tid string, f *frames) error {
	modes := req.modes()
	if len(modes) == 1 {
		return g.Stream(ctx, graphRequest(req, tid), f.emit)
	}
	if m, ok := g.(ModeStreamer); ok {
		return m.StreamModes(ctx, graphRequest(req, tid), modes, f.emitMode)
	}
	return g.Stream(ctx, graphRequest(req, tid), func(chunk any) error {
		for _, mode := range modes {
			if err := f.emitMode(mode, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Service) writeSSEHeader(w http.ResponseWriter, tid, runID string) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Content-Location", s.contentLocation(tid, runID))
	w.WriteHeader(http.StatusOK)
}

// runStream runs a stream run within the wait bound and sends its frames as they are
// produced, each flushed: in serve mode the client reads them live; under the custom-handler
// protocol the flush is a no-op and the host gets the whole body when the run ends. When the
// bound passes first it sends the wait-exceeded error frame and the end frame while the run
// goes on. end runs when the run ends, with its failure.
func (s *Service) runStream(w http.ResponseWriter, r *http.Request, g host.StreamableGraph, req *RunRequest, tid string, end func(ctx context.Context, err error)) {
	runID := uuid.NewString()
	f := newFrames(s.maxStream, req.StreamMode, runID)
	var runErr error
	result := make(chan bool, 1)
	go func() {
		result <- waitbound.Run(r.Context(), s.maxWait, func(ctx context.Context) {
			ctx, _ = withOutcome(ctx)
			runErr = s.stream(ctx, g, req, tid, f)
			if runErr != nil && !errors.Is(runErr, host.ErrStreamOverflow) {
				s.logger.Error("stream processing failed", "graph", req.AssistantID, "thread_id", tid, "run_id", runID, "error", runErr)
			}
			end(ctx, runErr)
		})
	}()
	s.writeSSEHeader(w, req.locationThread(tid), runID)
	rc := http.NewResponseController(w)
	sent := 0
	send := func(b []byte) {
		sent += len(b)
		_, _ = w.Write(b)
		_ = rc.Flush()
	}
	send(f.since(0)) // the metadata frame
	for {
		select {
		case <-f.wake:
			send(f.since(sent))
		case finished := <-result:
			if !finished {
				s.logWaitExceeded(req, tid, runID)
				body := f.detach()
				send(append(append(body[min(sent, len(body)):], waitExceededFrame(s.maxWait)...), platformEndFrame...))
				return
			}
			send(f.since(sent))
			return
		}
	}
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
	s.runStream(w, r, g.(host.StreamableGraph), req, tid, func(ctx context.Context, err error) {
		_ = s.releaseThread(ctx, tid, releaseStatus(ctx, err), outcomeValues(ctx))
	})
}

func (s *Service) serveThreadlessStream(w http.ResponseWriter, r *http.Request) {
	tid, req, g, err := s.admitThreadless(r, true)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.runStream(w, r, g.(host.StreamableGraph), req, tid, func(ctx context.Context, err error) {
		if req.temporary {
			_ = s.releaseThread(ctx, tid, releaseStatus(ctx, err), outcomeValues(ctx))
			s.endTemporary(ctx, tid, req)
		}
	})
}

// releaseStatus is a finished run's thread status: error, interrupted (a durable
// assistant's run waits for an event) or idle.
func releaseStatus(ctx context.Context, err error) threads.Status {
	if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		return o.status(err)
	}
	if err != nil {
		return threads.StatusError
	}
	return threads.StatusIdle
}
