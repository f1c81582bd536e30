package funchost

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// edge is the request hygiene every server of this package applies in front of its handler:
//
//   - the body gets a read deadline (BodyReadTimeout), cleared when the body ends, so a slow or
//     stalled body cannot hold a connection and its goroutine forever;
//   - the handler sees a shallow copy of the request, so whatever it does to r.Body, net/http
//     keeps its own body reader and with it the `Expect: 100-continue` handling (a rejection
//     answers at once instead of waiting for a body the client will not send);
//   - an answer sent before its body was read completely and correctly (bad framing, a read
//     timeout, a body over a cap, a rejection before reading) carries `Connection: close`
//     and ends the connection: net/http's own close-after-unread-body rule is off in full
//     duplex mode, and without this the bytes after a broken body would be parsed as the
//     next request (request smuggling);
//   - a body the handler left unread is drained (bounded) after the answer is flushed, so a
//     client still sending sees the answer and not a TCP reset;
//   - a request that came with both Content-Length and `Transfer-Encoding: chunked` (net/http
//     drops the length and reads the body chunked) ends its connection after the answer: a
//     front end that framed it by the length would read what follows as another request;
//   - on shutdown, requests still receiving their body are cut (their reads time out);
//   - the request's context carries the allowed browser origins (ServerConfig.AllowedOrigins)
//     to the routing layer's cross-site check (serveFunction).
type edge struct {
	cfg     ServerConfig
	next    http.Handler
	origins *http.CrossOriginProtection // ServerConfig.AllowedOrigins; nil: none

	mu       sync.Mutex
	closing  bool
	inflight map[*edgeBody]struct{} // bodies not yet at EOF
}

func newEdge(cfg ServerConfig, next http.Handler) *edge {
	return &edge{cfg: cfg.withDefaults(), next: next, inflight: map[*edgeBody]struct{}{}}
}

// edgeBody tracks how much of a request body was read. Reads happen on the handler's
// goroutine; shutdown only sets a deadline, so the counters need no lock.
type edgeBody struct {
	src   io.ReadCloser
	rc    *http.ResponseController
	edge  *edge
	n     atomic.Int64
	eof   atomic.Bool
	reads atomic.Bool
	bad   atomic.Bool // a read failed (timeout, bad framing): nothing left worth reading
}

func (b *edgeBody) Read(p []byte) (int, error) {
	b.reads.Store(true)
	n, err := b.src.Read(p)
	b.n.Add(int64(n))
	if err == io.EOF && !b.eof.Swap(true) {
		_ = b.rc.SetReadDeadline(time.Time{}) // the background read must not time out
		b.edge.forget(b)
	} else if err != nil && err != io.EOF {
		b.bad.Store(true)
	}
	return n, err
}

// Close leaves the real body to net/http, which closes it after the handler returns (and
// after the drain).
func (b *edgeBody) Close() error { return nil }

func (e *edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c, ok := r.Context().Value(edgeConnKey{}).(*edgeConn); ok && c.smuggled(r) {
		w.Header().Set("Connection", "close")
	}
	if e.origins != nil {
		r = r.WithContext(withOrigins(r.Context(), e.origins))
	}
	if r.Body == nil || r.Body == http.NoBody {
		e.next.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex() // reading after answering (the drain) is allowed
	b := &edgeBody{src: r.Body, rc: rc, edge: e}
	if !e.track(b) {
		_ = rc.SetReadDeadline(time.Now()) // shutting down: do not wait for a new body
	} else if e.cfg.BodyReadTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(e.cfg.BodyReadTimeout))
	}
	inner := r.WithContext(r.Context()) // a copy: net/http keeps its own r.Body
	inner.Body = b
	defer e.forget(b)
	e.next.ServeHTTP(&edgeWriter{ResponseWriter: w, body: b}, inner)
	e.drain(r, b)
}

// edgeWriter marks an answer `Connection: close` when its headers go out before the body
// reached its end: whatever follows such a body on the connection is never read as a request.
type edgeWriter struct {
	http.ResponseWriter
	body  *edgeBody
	wrote bool
}

func (w *edgeWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		if status >= 200 && !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *edgeWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends what is buffered (SSE answers flush per frame).
func (w *edgeWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *edgeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// drain reads what is left of a body the handler did not finish, once the answer is on the
// wire, so closing the connection does not reset it under the client. It gives up (and lets
// net/http half-close the connection) when more than DrainBodyBytes are declared, and skips
// a client that is still waiting for `100 Continue`.
func (e *edge) drain(r *http.Request, b *edgeBody) {
	if b.eof.Load() || b.bad.Load() {
		return
	}
	if !b.reads.Load() && hasToken(r.Header.Get("Expect"), "100-continue") {
		return
	}
	if r.ContentLength > 0 && r.ContentLength-b.n.Load() > e.cfg.DrainBodyBytes {
		return
	}
	if err := b.rc.Flush(); err != nil {
		return
	}
	_ = b.rc.SetReadDeadline(time.Now().Add(e.cfg.DrainTimeout))
	_, _ = io.CopyN(io.Discard, b.src, e.cfg.DrainBodyBytes)
}

func (e *edge) track(b *edgeBody) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inflight[b] = struct{}{}
	return !e.closing
}

func (e *edge) forget(b *edgeBody) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.inflight, b)
}

// shutdown cuts every request still receiving its body: its next read times out, so its
// handler answers (408) and the connection closes.
func (e *edge) shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closing = true
	now := time.Now()
	for b := range e.inflight {
		_ = b.rc.SetReadDeadline(now)
	}
}

// hasToken reports whether a comma-separated header value holds token (case-insensitive).
func hasToken(v, token string) bool {
	for part := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(strings.TrimSpace(part), token) {
			return true
		}
	}
	return false
}
