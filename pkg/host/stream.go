package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// SSE frame pieces of the buffered stream.
const (
	sseContentType  = "text/event-stream; charset=utf-8"
	dataFramePrefix = "event: data\ndata: "
	frameSuffix     = "\n\n"
	endFrame        = "event: end\ndata: {}\n\n"
	failedFrame     = "event: error\ndata: {\"error\": \"stream processing failed\"}\n\n"
)

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
	if err := a.admit(r, g, streamRequestKind, &rc, adm); err != nil {
		a.observer.rejected(r.Context(), &rc, rejectReason(err))
		writeError(w, err)
		return
	}
	a.observer.started(r.Context(), &rc)
	runID, invocationID := rc.RunID, rc.InvocationID
	buf := &frameBuffer{max: a.opts.MaxStreamResponseBytes}
	finished := waitbound.Run(r.Context(), a.opts.MaxWait, func(ctx context.Context) {
		a.runStream(ctx, g, streamer, adm, buf)
		a.release(g, adm)
		a.endStream(ctx, g, &rc, buf)
	})
	if !finished {
		// The run goes on and owns buf: only detach, under buf's lock, may touch it here.
		a.logger.Warn("graph run passed the wait bound; answered without it", "graph", g.name,
			"run_id", runID, "invocation_id", invocationID, "max_wait", a.opts.MaxWait)
		chunks := append(buf.detach(), []byte(waitExceededFrame(a.opts.MaxWait)), []byte(endFrame))
		writeSSE(w, chunks)
		return
	}
	if pub := clientError(buf.err); pub != nil && len(buf.chunks) == 0 {
		writeError(w, pub)
		return
	}
	switch {
	case buf.overflow:
		buf.appendTerminal(overflowFrame(a.opts.MaxStreamResponseBytes))
	case buf.err != nil:
		buf.appendTerminal(failedFrame)
	}
	buf.appendTerminal(endFrame)
	writeSSE(w, buf.chunks)
}

func overflowFrame(maxBytes int) string {
	return "event: error\ndata: {\"error\": \"stream response exceeded max buffered size (" +
		strconv.Itoa(maxBytes) + " bytes)\"}\n\n"
}

// endStream tells the observer (and the log) how a stream run ended.
func (a *GraphHostApp) endStream(ctx context.Context, g *hostedGraph, rc *RunContext, buf *frameBuffer) {
	switch {
	case clientError(buf.err) != nil && len(buf.chunks) == 0:
		a.observer.failed(ctx, rc, buf.err)
	case buf.overflow:
		a.observer.failed(ctx, rc, fmt.Errorf("stream run=%s: %w", rc.RunID, ErrStreamOverflow))
	case buf.err != nil:
		a.logger.Error("stream processing failed", "graph", g.name, "run_id", rc.RunID,
			"invocation_id", rc.InvocationID, "error", buf.err)
		a.observer.failed(ctx, rc, buf.err)
	default:
		a.observer.completed(ctx, rc)
	}
}

// waitExceededFrame is the error frame of a stream whose run passed the wait bound.
func waitExceededFrame(bound time.Duration) string {
	msg := WaitExceededMessage(bound)
	return "event: error\ndata: {\"error\": \"" + strings.ToLower(msg[:1]) + msg[1:] + "\"}\n\n"
}

// writeSSE answers 200 with the buffered SSE body.
func writeSSE(w http.ResponseWriter, chunks [][]byte) {
	h := w.Header()
	h.Set("Content-Type", sseContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
	}
}

// runStream runs the graph, collecting frames into buf until it returns, fails or
// overflows (or the request stopped waiting: see frameBuffer.detach).
func (a *GraphHostApp) runStream(ctx context.Context, g *hostedGraph, s StreamableGraph, adm *admission, buf *frameBuffer) {
	ctx, cancel := a.runContext(ctx, g, adm)
	defer cancel()
	buf.setCancel(cancel)
	err := guard(func() error { return s.Stream(ctx, adm.req.Request, buf.emit) })
	buf.close(err)
}

// slabSize is the allocation unit of frame storage; frames larger than a slab get their own.
const slabSize = 32 << 10

// frameBuffer collects SSE frames. Accepted data frames never total more than max bytes, and
// storage is allocated in slabs, so a request's memory stays near the cap.
type frameBuffer struct {
	max int

	mu       sync.Mutex
	detached bool               // the request stopped waiting: events are dropped; guarded by mu
	total    int                // bytes of accepted data frames; guarded by mu
	chunks   [][]byte           // written in order; guarded by mu
	scratch  []byte             // frame encoding buffer; guarded by mu
	compact  []byte             // compact JSON buffer; guarded by mu
	cancel   context.CancelFunc // cancels the graph; guarded by mu
	closed   bool               // no more frames accepted; guarded by mu
	overflow bool               // guarded by mu until close
	err      error              // first failure; guarded by mu until close
}

// emit is the graph's callback: it encodes chunk as one data frame.
func (b *frameBuffer) emit(chunk any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.detached {
		return nil // nobody reads the frames any more; the run goes on to its end
	}
	if b.closed {
		if b.overflow {
			return ErrStreamOverflow
		}
		return errStreamClosed
	}
	frame, err := b.encodeFrame(chunk)
	if err != nil {
		b.fail(fmt.Errorf("encode stream event: %w", err))
		return b.err
	}
	if b.total+len(frame) > b.max {
		b.overflow = true
		b.fail(ErrStreamOverflow)
		return ErrStreamOverflow
	}
	b.total += len(frame)
	b.appendLocked(frame)
	return nil
}

// fail stops accepting frames and cancels the graph. Called with mu held.
func (b *frameBuffer) fail(err error) {
	if b.err == nil {
		b.err = err
	}
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
}

// setCancel gives the buffer the graph's cancel function, called on overflow.
func (b *frameBuffer) setCancel(cancel context.CancelFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancel = cancel
}

// detach is called when the request stopped waiting for the run: it returns the frames
// accepted so far, and from then on the graph's events are dropped (emit returns nil), so
// the run goes on to its end.
func (b *frameBuffer) detach() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.detached = true
	return b.chunks[:len(b.chunks):len(b.chunks)]
}

// encodeFrame renders `event: data\ndata: <json>\n\n` into the scratch buffer: an object
// event as is, anything else as {"data": "<text>"}; json.dumps style.
func (b *frameBuffer) encodeFrame(chunk any) ([]byte, error) {
	compact, err := appendCompact(b.compact[:0], chunk)
	if err != nil {
		return nil, err
	}
	b.compact = compact
	f := append(b.scratch[:0], dataFramePrefix...)
	if isJSONObject(compact) {
		f = pyjson.AppendReformat(f, compact)
	} else {
		f = append(f, `{"data": `...)
		f = pyjson.AppendString(f, textOf(chunk, compact))
		f = append(f, '}')
	}
	f = append(f, frameSuffix...)
	b.scratch = f
	return f, nil
}

// appendLocked copies frame into slab storage.
func (b *frameBuffer) appendLocked(frame []byte) {
	if n := len(b.chunks); n > 0 {
		last := b.chunks[n-1]
		if cap(last)-len(last) >= len(frame) {
			b.chunks[n-1] = append(last, frame...)
			return
		}
	}
	size := slabSize
	if len(frame) > size {
		size = len(frame)
	}
	if rest := b.max - b.total + len(frame); rest < size && rest >= len(frame) {
		size = rest // the last slab only needs what the cap still allows
	}
	slab := make([]byte, 0, size)
	b.chunks = append(b.chunks, append(slab, frame...))
}

// close ends the stream with the graph's result.
func (b *frameBuffer) close(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil && b.err == nil && !errors.Is(err, ErrStreamOverflow) {
		b.err = err
	}
	if b.overflow {
		b.err = nil // overflow is reported by its own frame
	}
	b.closed = true
	b.scratch, b.compact = nil, nil
}

// appendTerminal appends an error or end frame; they are never counted against the cap.
func (b *frameBuffer) appendTerminal(frame string) {
	b.chunks = append(b.chunks, []byte(frame))
}
