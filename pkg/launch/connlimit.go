package launch

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
)

// DefaultMaxConnections is how many client connections `serve` holds open at once
// (FUNCGRAPH_MAX_CONNECTIONS).
const DefaultMaxConnections = 1024

// connLimit caps the connections `serve` holds open. At the cap a new connection takes the
// place of the one idle the longest: a connection waiting for its next request, or one that
// has not sent a whole request yet (net/http's StateIdle and StateNew). When every connection
// is inside a request the new one is closed at once, so many idle clients cannot keep others
// out and busy ones are never cut. Closing an idle connection is what the idle timeout does
// too: a client whose next request crosses the close sends it again on a new connection.
type connLimit struct {
	max    int
	logger *slog.Logger

	mu    sync.Mutex
	conns map[string]*limitedConn // by the client's address
	// ticks orders the connections by when they became idle.
	ticks uint64
}

// limitedConn is a connection counted by a connLimit.
type limitedConn struct {
	net.Conn
	l   *connLimit
	key string
	// idleSince is the tick at which the connection became idle, 0 while it serves a
	// request. Guarded by l.mu.
	idleSince uint64
}

func newConnLimit(max int, logger *slog.Logger) *connLimit {
	return &connLimit{max: max, logger: logger, conns: make(map[string]*limitedConn)}
}

// listener returns ln with every accepted connection counted.
func (l *connLimit) listener(ln net.Listener) net.Listener { return limitListener{Listener: ln, l: l} }

type limitListener struct {
	net.Listener
	l *connLimit
}

// Accept waits for the next connection the cap admits.
func (ln limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ln.l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// admit counts c, closing the connection idle the longest when at the cap; it closes c and
// returns nil when every connection is busy.
func (l *connLimit) admit(c net.Conn) *limitedConn {
	lc := &limitedConn{Conn: c, l: l, key: c.RemoteAddr().String()}
	var victim *limitedConn
	l.mu.Lock()
	if len(l.conns) >= l.max {
		for _, o := range l.conns {
			if o.idleSince != 0 && (victim == nil || o.idleSince < victim.idleSince) {
				victim = o
			}
		}
		if victim == nil {
			n := len(l.conns)
			l.mu.Unlock()
			_ = c.Close()
			l.logger.Warn("connection refused: every connection is serving a request", "max_connections", l.max, "open", n)
			return nil
		}
		delete(l.conns, victim.key)
	}
	l.ticks++
	lc.idleSince = l.ticks
	l.conns[lc.key] = lc
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Conn.Close()
		l.logger.Debug("idle connection closed to admit a new one", "max_connections", l.max)
	}
	return lc
}

// connState follows net/http's view of each connection (funchost.ServerConfig.ConnState).
func (l *connLimit) connState(c net.Conn, state http.ConnState) {
	key := c.RemoteAddr().String()
	l.mu.Lock()
	defer l.mu.Unlock()
	lc := l.conns[key]
	if lc == nil {
		return
	}
	switch state {
	case http.StateNew, http.StateIdle:
		l.ticks++
		lc.idleSince = l.ticks
	case http.StateActive:
		lc.idleSince = 0
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, key)
	}
}

// Close closes the connection and stops counting it.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	if c.l.conns[c.key] == c {
		delete(c.l.conns, c.key)
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}
