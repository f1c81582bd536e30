package funchost

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// edgeListener hands the server every accepted connection as an edgeConn.
type edgeListener struct {
	net.Listener
	stall time.Duration
}

// Accept waits for the next connection.
func (l edgeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &edgeConn{Conn: c, stall: l.stall}, nil
}

// edgeConn is a connection of a Server, with the hygiene only the connection itself can see.
//
// Every write to the client is bounded by WriteStallTimeout of no progress: before each write
// the connection's write deadline is set that far ahead, and renewed whenever the kernel took
// some of the bytes, so a write fails only when the client accepted nothing for that long. A
// client that reads slowly, an SSE stream that is idle between frames and a response that
// waits on a long invocation are never cut (nothing is being written while they wait); a
// client that stopped reading is: the write fails, net/http cancels the request's context and
// closes the connection, and the handler's buffers are released when it returns. net/http's
// own writes (the rest of a response after the handler returned, 100 Continue, its error
// answers) are bounded alike.
//
// Every request line and header read is scanned for Content-Length fields (clScanner): net/http
// drops a Content-Length that comes with `Transfer-Encoding: chunked` and frames the body as
// chunked, but a front end that framed it by the length would read the bytes after it as
// another request. HTTP/1.1 has the server close such a connection after answering; the edge
// sees it as a chunked request on a connection that read more Content-Length fields (clSeen)
// than its requests declared (clUsed).
type edgeConn struct {
	net.Conn
	stall time.Duration
	// until is a write deadline set from outside (http.ResponseController, net/http), unix
	// nanoseconds, 0 for none: a write never waits past it.
	until atomic.Int64
	// scan is Read's (net/http never reads a connection from two goroutines at once).
	scan           clScanner
	clSeen, clUsed atomic.Int64
}

// Read reads from the connection, counting the Content-Length fields that pass.
func (c *edgeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if k := c.scan.scan(p[:n]); k > 0 {
			c.clSeen.Add(int64(k))
		}
	}
	return n, err
}

// smuggled reports whether r, a request read on c, carried a Content-Length that net/http
// dropped for its chunked Transfer-Encoding, and accounts for r's own Content-Length. It errs
// on the side of yes: a body or a pipelined request holding a Content-Length line counts too,
// which only costs that connection its keep-alive.
func (c *edgeConn) smuggled(r *http.Request) bool {
	if _, ok := r.Header["Content-Length"]; ok {
		c.clUsed.Add(1)
		return false
	}
	return len(r.TransferEncoding) > 0 && c.clSeen.Load() > c.clUsed.Load()
}

// clScanner counts the Content-Length header fields in a byte stream fed in pieces: the
// case-insensitive text "\ncontent-length:" (a field name starts a line; net/http refuses
// whitespace before the colon).
type clScanner struct {
	matched int // bytes of clField matched at the end of the last piece
}

const clField = "\ncontent-length:"

// scan feeds p and returns how many fields ended in it.
func (s *clScanner) scan(p []byte) (found int) {
	m := s.matched
	for i := 0; i < len(p); {
		if m == 0 {
			j := bytes.IndexByte(p[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			m = 1
			continue
		}
		c := p[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != clField[m] {
			m = 0 // p[i] is looked at again: it may start a line
			continue
		}
		i++
		if m++; m == len(clField) {
			found++
			m = 0
		}
	}
	s.matched = m
	return found
}

// edgeConnKey is the context key of the request's edgeConn (Server's ConnContext).
type edgeConnKey struct{}

// Write writes p, failing with os.ErrDeadlineExceeded once the client has accepted no byte
// for the stall timeout (or the deadline set from outside passed).
func (c *edgeConn) Write(p []byte) (int, error) {
	written := 0
	for {
		now := time.Now()
		deadline := now.Add(c.stall)
		until := c.until.Load()
		if until != 0 && until < deadline.UnixNano() {
			deadline = time.Unix(0, until)
		}
		if err := c.Conn.SetWriteDeadline(deadline); err != nil {
			return written, err
		}
		n, err := c.Conn.Write(p[written:])
		written += n
		// A timeout after some progress renews the deadline; one without progress, or past
		// the deadline set from outside, is the answer.
		if err == nil || n == 0 || !errors.Is(err, os.ErrDeadlineExceeded) ||
			(until != 0 && time.Now().UnixNano() >= until) {
			return written, err
		}
	}
}

// SetWriteDeadline records t as the latest any write may end; the zero time removes it.
func (c *edgeConn) SetWriteDeadline(t time.Time) error {
	c.until.Store(unixNanoOrZero(t))
	return nil
}

// SetDeadline sets the read deadline and records the write deadline (SetWriteDeadline).
func (c *edgeConn) SetDeadline(t time.Time) error {
	c.until.Store(unixNanoOrZero(t))
	return c.Conn.SetReadDeadline(t)
}

// CloseWrite half-closes a TCP connection (net/http does before it closes a connection whose
// request body it did not read, so the answer is not lost to a reset).
func (c *edgeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func unixNanoOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
