package platform

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/sse"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// platformEndFrame ends every platform stream.
const platformEndFrame = "event: end\ndata: null\n\n"

// newFrames returns the frame buffer of one platform stream, its counted metadata frame
// written.
func newFrames(maxBytes int, req *RunRequest, runID string) *sse.Buffer {
	f := sse.New(maxBytes, host.ErrStreamOverflow, frameEncoder(req.modes()))
	f.Start("event: metadata\ndata: {\"run_id\": \"" + runID + "\"}\n\n")
	return f
}

// frameEncoder is the event encoder of a stream in modes: in a run of one mode other than
// the messages modes, an event that is not an object is wrapped as {"data": <event>}; in a
// run of several, and for messages, events are written as they are (a [message, metadata]
// pair stays an array).
func frameEncoder(modes []string) sse.Encoder {
	if len(modes) == 1 && !messagesMode(modes[0]) {
		return appendWrappedEvent
	}
	return appendEvent
}

// appendWrappedEvent appends an event's data: an object as is, anything else as
// {"data": <event>}.
func appendWrappedEvent(dst []byte, chunk any) ([]byte, error) {
	data, err := encodeOutput(chunk, "data")
	return append(dst, data...), err
}

// appendEvent appends an event's data as it is (a messages pair stays an array).
func appendEvent(dst []byte, chunk any) ([]byte, error) {
	data, err := encodeOutput(chunk, "")
	return append(dst, data...), err
}

// stream runs g's Stream into f and returns the run's failure.
func (s *Service) stream(ctx context.Context, g host.StreamableGraph, req *RunRequest, tid string, f *sse.Buffer) error {
	ctx, cancel := context.WithCancel(withOwner(withResume(withRunContext(ctx, req.Context), req.Resume), req.owner))
	defer cancel()
	f.SetCancel(cancel)
	_, err := guardValue(func() (struct{}, error) { return struct{}{}, streamModes(ctx, g, req, tid, f) })
	failure := f.Close(err)
	switch {
	case errors.Is(failure, host.ErrStreamOverflow):
		f.Append(sse.OverflowFrame(s.maxStream))
	case failure != nil:
		f.Append(sse.FailedFrame)
	}
	f.Append(platformEndFrame)
	return failure
}

// streamModes runs g's stream in the request's modes, each event a frame named after its
// mode as the SDK names them (eventName). A ModeStreamer runs StreamModes for several modes and
// for the messages modes; otherwise one mode runs Stream, and several run Stream in the first
// mode with each event under every mode.
func streamModes(ctx context.Context, g host.StreamableGraph, req *RunRequest, tid string, f *sse.Buffer) error {
	modes := req.modes()
	emitMode := func(mode string, chunk any) error { return f.Emit(eventName(mode), chunk) }
	if m, ok := g.(ModeStreamer); ok && (len(modes) > 1 || messagesMode(modes[0])) {
		return m.StreamModes(ctx, graphRequest(req, tid), graphModes(modes), emitMode)
	}
	if len(modes) == 1 {
		return g.Stream(ctx, graphRequest(req, tid), func(chunk any) error { return emitMode(modes[0], chunk) })
	}
	return g.Stream(ctx, graphRequest(req, tid), func(chunk any) error {
		for _, mode := range modes {
			if err := emitMode(mode, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// messagesMode reports whether mode asks for chat messages: "messages-tuple", or "messages",
// which is served the same way (one [message, metadata] pair per event).
func messagesMode(mode string) bool { return mode == "messages-tuple" || mode == "messages" }

// graphModes is what a graph is asked for: modes with "messages" as "messages-tuple", the
// mode graphs emit [message, metadata] pairs in, duplicates dropped.
func graphModes(modes []string) []string {
	out := make([]string, 0, len(modes))
	for _, m := range modes {
		if m = graphMode(m); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// graphMode is the mode a graph is asked for in place of mode.
func graphMode(mode string) string {
	if mode == "messages" {
		return "messages-tuple"
	}
	return mode
}

// eventName is the SSE event name of a stream mode: the messages modes' events are named
// "messages", as the SDK expects of "messages-tuple".
func eventName(mode string) string {
	if messagesMode(mode) {
		return "messages"
	}
	return mode
}

func (s *Service) writeSSEHeader(w http.ResponseWriter, tid, runID string) {
	h := w.Header()
	h.Set("Content-Type", sse.ContentType)
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
	f := newFrames(s.maxStream, req, runID)
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
	counted := answerOf(r.Context())
	send := func(b []byte) {
		sent += len(b)
		_ = counted.count(int64(len(b))) // a run's route: its frames are counted, never refused
		_, _ = w.Write(b)
		_ = rc.Flush()
	}
	send(f.Since(0)) // the metadata frame
	for {
		select {
		case <-f.Wake():
			send(f.Since(sent))
		case finished := <-result:
			if !finished {
				s.logWaitExceeded(req, tid, runID)
				rest := f.Detach().From(sent)
				send(append(append(rest, sse.WaitExceededFrame(s.maxWait)...), platformEndFrame...))
				return
			}
			send(f.Since(sent))
			return
		}
	}
}

// serveThreadRunStream runs on a thread, streaming. The stream counts among the caller's open
// event streams (respond.go): past a bound it is refused 429 before anything is read.
func (s *Service) serveThreadRunStream(w http.ResponseWriter, r *http.Request) {
	closeStream, err := s.openStream(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	defer closeStream()
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

// serveThreadlessStream runs without a thread, streaming; it counts as serveThreadRunStream.
func (s *Service) serveThreadlessStream(w http.ResponseWriter, r *http.Request) {
	closeStream, err := s.openStream(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	defer closeStream()
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
