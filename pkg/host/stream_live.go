package host

import (
	"context"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/sse"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
)

// serveLiveStream is the stream route of a graph registered with LiveStream: the same frames
// as the buffered stream, in the same order and within the same bounds, each written and
// flushed as the graph produces it. The answer's status is chosen at its first frame: a run
// that fails with a client error before any event is answered with that error as JSON, as the
// buffered stream is.
func (a *GraphHostApp) serveLiveStream(w http.ResponseWriter, r *http.Request, g *hostedGraph, streamer StreamableGraph, rc *RunContext, adm *admission) {
	buf := sse.New(a.opts.MaxStreamResponseBytes, ErrStreamOverflow, new(dataEncoder).appendData)
	var failure error
	result := make(chan bool, 1)
	go func() {
		result <- waitbound.Run(r.Context(), a.opts.MaxWait, func(ctx context.Context) {
			failure = a.runStream(ctx, g, streamer, adm, buf)
			a.release(g, adm)
			a.endStream(ctx, g, rc, failure, buf.Events())
		})
	}()
	rcw := http.NewResponseController(w)
	sent, started := 0, false
	send := func(b []byte) {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", sse.ContentType)
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		sent += len(b)
		adm.hold.Add(int64(len(b))) // the run's frames, counted as they are sent
		_, _ = w.Write(b)
		_ = rcw.Flush()
	}
	for {
		select {
		case <-buf.Wake():
			if b := buf.Since(sent); len(b) > 0 {
				send(b)
			}
		case finished := <-result:
			if !finished {
				a.logger.Warn("graph run passed the wait bound; answered without it", "graph", g.name,
					"run_id", rc.RunID, "invocation_id", rc.InvocationID, "max_wait", a.opts.MaxWait)
				rest := buf.Detach().From(sent)
				send(append(append(rest, sse.WaitExceededFrame(a.opts.MaxWait)...), endFrame...))
				return
			}
			if pub := clientError(failure); pub != nil && !buf.Events() && !started {
				writeError(w, pub)
				return
			}
			a.closeFrames(buf, failure)
			send(buf.Since(sent))
			return
		}
	}
}
