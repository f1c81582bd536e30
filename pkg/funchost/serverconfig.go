package funchost

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Defaults of ServerConfig. They are listed in docs/limits.md, "Server timeouts and limits".
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout bounds reading a request's whole body, counted from the end of
	// its headers.
	DefaultBodyReadTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds how long a keep-alive connection may wait for its next request.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxHeaderBytes caps the request line and headers.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultDrainBodyBytes is how much unread request body the server still reads (and
	// discards) after answering, so the answer is not lost to a TCP reset.
	DefaultDrainBodyBytes = 8 << 20
	// DefaultDrainTimeout bounds that drain.
	DefaultDrainTimeout = 5 * time.Second
	// DefaultShutdownTimeout bounds how long shutdown waits for in-flight requests.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultWriteStallTimeout bounds how long one write to a client may make no progress.
	DefaultWriteStallTimeout = 30 * time.Second
)

// ServerConfig holds the HTTP server's timeouts and limits (the custom handler and the
// standalone server alike). The zero value of a field means its default; DefaultServerConfig
// spells them out. There is deliberately no timeout on a whole response: responses may stream
// (SSE) or wait on a long invocation, which the Functions host bounds with functionTimeout.
// What is bounded is each write (WriteStallTimeout): a client that stops reading is cut.
type ServerConfig struct {
	// ReadHeaderTimeout bounds reading the request line and headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request body, from the end of the headers to the
	// body's end; a slower body fails with 408 and the connection closes. Default 60 s.
	BodyReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request for this long.
	// Default 120 s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line plus headers (431 above it). Default 64 KiB.
	MaxHeaderBytes int
	// DrainBodyBytes is the most unread body the server reads and discards after answering a
	// request whose body the handler did not read (a rejection), so that a client still sending
	// sees the answer instead of a connection reset. A body with more left unread is not drained:
	// the connection is half-closed and closed. Default 8 MiB.
	DrainBodyBytes int64
	// DrainTimeout bounds that drain. Default 5 s.
	DrainTimeout time.Duration
	// WriteStallTimeout bounds how long a write to the client may make no progress: the
	// deadline is renewed whenever the client takes some of the bytes, so a slow client that
	// reads, an SSE stream idle between frames and a response waiting on a long invocation
	// all pass, while a client that stopped reading has its connection closed, its request's
	// context cancelled and what its response held released. Default 30 s.
	WriteStallTimeout time.Duration
	// ShutdownTimeout bounds how long shutdown waits for in-flight requests once the serve
	// context ends; requests still receiving their body are cut at once, and whatever is left
	// after this long is closed. Default 30 s.
	ShutdownTimeout time.Duration
	// AllowedOrigins are the browser origins (scheme://host[:port], as a browser sends them
	// in the Origin header) whose cross-site requests may change state. By default none may:
	// every route of CustomHandler and Standalone refuses a browser's cross-site request with
	// an unsafe method (403, see CrossSiteMessage) unless its Origin is listed here. The
	// server hands the list to those handlers with each request; a handler served by another
	// server allows no origin. Default none.
	AllowedOrigins []string
	// ConnState, if set, is called as net/http's Server.ConnState is: with each connection
	// (whose RemoteAddr is the client's) when it changes state. It is how a listener that
	// caps connections learns which ones are idle. Default none.
	ConnState func(net.Conn, http.ConnState)
}

// DefaultServerConfig returns the configuration with every default filled in.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{}.withDefaults()
}

func (c ServerConfig) withDefaults() ServerConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.BodyReadTimeout, DefaultBodyReadTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.DrainTimeout, DefaultDrainTimeout)
	def(&c.ShutdownTimeout, DefaultShutdownTimeout)
	def(&c.WriteStallTimeout, DefaultWriteStallTimeout)
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.DrainBodyBytes == 0 {
		c.DrainBodyBytes = DefaultDrainBodyBytes
	}
	return c
}

// Validate reports a negative duration or size, a header cap too small to hold a request, or
// an allowed origin that is not one.
func (c ServerConfig) Validate() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadHeaderTimeout", c.ReadHeaderTimeout}, {"BodyReadTimeout", c.BodyReadTimeout},
		{"IdleTimeout", c.IdleTimeout}, {"DrainTimeout", c.DrainTimeout}, {"ShutdownTimeout", c.ShutdownTimeout},
		{"WriteStallTimeout", c.WriteStallTimeout},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s is negative (%s)", d.name, d.v))
		}
	}
	if c.MaxHeaderBytes < 0 || (c.MaxHeaderBytes > 0 && c.MaxHeaderBytes < 4096) {
		errs = append(errs, fmt.Errorf("MaxHeaderBytes %d: want 0 (default) or at least 4096", c.MaxHeaderBytes))
	}
	if c.DrainBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("DrainBodyBytes is negative (%d)", c.DrainBodyBytes))
	}
	if _, err := newOrigins(c.AllowedOrigins); err != nil {
		errs = append(errs, fmt.Errorf("AllowedOrigins: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("validate server config: %w", err)
	}
	return nil
}
