package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/sse"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// endFrame ends every stream of the hosting routes.
const endFrame = "event: end\ndata: {}\n\n"

// serveStream answers POST graphs/<name>/stream with a buffered SSE body.
func (a *GraphHostApp) serveStream(w http.ResponseWriter, r *http.Request, g *hostedGraph) {
	rc := a.newRunContext(r, g, EndpointStream)
	streamer, ok := g.graph.(StreamableGraph)
	if !ok {
		err := apierror.Newf(errNoStreaming, "Graph %s does not support streaming", pyRepr(g.name))
		a.observer.rejected(r.Context(), &rc, rejectReason(err))
		writeError(w, err)
		return
	}
	adm := new(admission)
	defer adm.free() // its answer's count and its stream's, once written
	if err := a.admit(r, g, streamRequestKind, &rc, adm); err != nil {
		a.observer.rejected(r.Context(), &rc, rejectReason(err))
		writeError(w, err)
		return
	}
	a.observer.started(r.Context(), &rc)
	if g.live {
		a.serveLiveStream(w, r, g, streamer, &rc, adm) // stream_live.go
		return
	}
	runID, invocationID := rc.RunID, rc.InvocationID
	buf := sse.New(a.opts.MaxStreamResponseBytes, ErrStreamOverflow, new(dataEncoder).appendData)
	var failure error
	finished := waitbound.Run(r.Context(), a.opts.MaxWait, func(ctx context.Context) {
		failure = a.runStream(ctx, g, streamer, adm, buf)
		a.release(g, adm)
		a.endStream(ctx, g, &rc, failure, buf.Events())
	})
	if !finished {
		// The run goes on and owns buf: only Detach may touch it here.
		a.logger.Warn("graph run passed the wait bound; answered without it", "graph", g.name,
			"run_id", runID, "invocation_id", invocationID, "max_wait", a.opts.MaxWait)
		frames := append(buf.Detach(), []byte(sse.WaitExceededFrame(a.opts.MaxWait)), []byte(endFrame))
		adm.hold.Add(framesBytes(frames))
		writeSSE(w, frames)
		return
	}
	if pub := clientError(failure); pub != nil && !buf.Events() {
		writeError(w, pub)
		return
	}
	a.closeFrames(buf, failure)
	frames := buf.Frames()
	adm.hold.Add(framesBytes(frames)) // the run is done: its frames are sent, counted
	writeSSE(w, frames)
}

// closeFrames appends a finished run's last frames to buf: the overflow or failure frame its
// failure calls for, then the end frame.
func (a *GraphHostApp) closeFrames(buf *sse.Buffer, failure error) {
	switch {
	case errors.Is(failure, ErrStreamOverflow):
		buf.Append(sse.OverflowFrame(a.opts.MaxStreamResponseBytes))
	case failure != nil:
		buf.Append(sse.FailedFrame)
	}
	buf.Append(endFrame)
}

// framesBytes is the size of a stream's frames.
func framesBytes(frames sse.Frames) int64 {
	var n int64
	for _, c := range frames {
		n += int64(len(c))
	}
	return n
}

// endStream tells the observer (and the log) how a stream run ended: its failure, and whether
// any event was sent before it.
func (a *GraphHostApp) endStream(ctx context.Context, g *hostedGraph, rc *RunContext, failure error, events bool) {
	switch {
	case clientError(failure) != nil && !events:
		a.observer.failed(ctx, rc, failure)
	case errors.Is(failure, ErrStreamOverflow):
		a.observer.failed(ctx, rc, fmt.Errorf("stream run=%s: %w", rc.RunID, ErrStreamOverflow))
	case failure != nil:
		a.logger.Error("stream processing failed", "graph", g.name, "run_id", rc.RunID,
			"invocation_id", rc.InvocationID, "error", failure)
		a.observer.failed(ctx, rc, failure)
	default:
		a.observer.completed(ctx, rc)
	}
}

// writeSSE answers 200 with the buffered SSE body.
func writeSSE(w http.ResponseWriter, frames sse.Frames) {
	h := w.Header()
	h.Set("Content-Type", sse.ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	for _, c := range frames {
		if _, err := w.Write(c); err != nil {
			return
		}
	}
}

// runStream runs the graph, collecting its events into buf until it returns, fails or
// overflows (or the request stopped waiting: see sse.Buffer.Detach), and returns the run's
// failure.
func (a *GraphHostApp) runStream(ctx context.Context, g *hostedGraph, s StreamableGraph, adm *admission, buf *sse.Buffer) error {
	ctx, cancel := a.runContext(ctx, g, adm)
	defer cancel()
	buf.SetCancel(cancel)
	err := guard(func() error {
		return s.Stream(ctx, adm.req.Request, func(chunk any) error { return buf.Emit("data", chunk) })
	})
	return buf.Close(err)
}

// dataEncoder writes the data of the hosting routes' `data` frames: an object event as is,
// anything else as {"data": "<text>"}; json.dumps style.
type dataEncoder struct {
	compact []byte // compact JSON of the event, kept between events
}

func (e *dataEncoder) appendData(dst []byte, chunk any) ([]byte, error) {
	compact, err := appendCompact(e.compact[:0], chunk)
	if err != nil {
		return nil, err
	}
	e.compact = compact
	if isJSONObject(compact) {
		return pyjson.AppendReformat(dst, compact), nil
	}
	dst = append(dst, `{"data": `...)
	dst = pyjson.AppendString(dst, textOf(chunk, compact))
	return append(dst, '}'), nil
}
