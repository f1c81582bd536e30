package host

import (
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
)

// WaitExceededMessage is the text of the answer to a request whose graph run passed the wait
// bound: the detail of invoke's 504, and, lower-cased, the error frame of a stream.
func WaitExceededMessage(bound time.Duration) string {
	return "Graph run did not finish within " + waitbound.Seconds(bound) + "; it goes on in the background"
}

// waitExceeded answers an invoke whose graph run passed Options.MaxWait: 504
// {"error":"error","detail":"Graph run did not finish within <n> s; it goes on in the background"}.
// The run goes on; the observer hears of its end when it ends.
func (a *GraphHostApp) waitExceeded(w http.ResponseWriter, g *hostedGraph, runID, invocationID string) {
	a.logger.Warn("graph run passed the wait bound; answered without it", "graph", g.name,
		"run_id", runID, "invocation_id", invocationID, "max_wait", a.opts.MaxWait)
	writeError(w, &publicError{kind: errWaitExceeded, msg: WaitExceededMessage(a.opts.MaxWait)}, a.logger)
}

// earlyReply is the answer an inline run's Bounded writes, collected for waitbound.ReplyEarly.
type earlyReply struct {
	header http.Header
	status int
	body   []byte
}

func (r *earlyReply) Header() http.Header {
	if r.header == nil {
		r.header = make(http.Header)
	}
	return r.header
}

func (r *earlyReply) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *earlyReply) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.body = append(r.body, p...)
	return len(p), nil
}
