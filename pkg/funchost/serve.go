package funchost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
)

// Serve listens on addr and serves h with DefaultServerConfig until ctx is done, then shuts
// down gracefully. ready, if not nil, is called with the bound address once the listener is
// open. See ServeConfig.
func Serve(ctx context.Context, addr string, h http.Handler, logger *slog.Logger, ready func(net.Addr)) error {
	return ServeConfig(ctx, DefaultServerConfig(), addr, h, logger, ready)
}

// ServeConfig is Serve with explicit timeouts and limits.
func ServeConfig(ctx context.Context, cfg ServerConfig, addr string, h http.Handler, logger *slog.Logger, ready func(net.Addr)) error {
	srv, err := NewServer(cfg, h, logger)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listen %s: %w", addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return srv.Serve(ctx, ln)
}

// Server is an HTTP server with the timeouts, limits and request hygiene of ServerConfig:
// header and body read timeouts, an idle timeout, a header size cap, writes that may not stall
// (a client that stops reading is cut), a bounded drain of unread bodies (so rejections reach
// the client), prompt answers to `Expect: 100-continue` requests that are rejected, and a
// shutdown that cuts stalled clients and exits cleanly.
type Server struct {
	cfg    ServerConfig
	edge   *edge
	http   *http.Server
	logger *slog.Logger
	// drain ends when shutdown begins: the requests' UntilDrain contexts end with it.
	drain     context.Context
	drainDone context.CancelFunc
}

// NewServer validates cfg (zero fields take their defaults) and returns a server for h.
// logger nil means slog.Default().
func NewServer(cfg ServerConfig, h http.Handler, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	e := newEdge(cfg, h)
	e.origins, _ = newOrigins(cfg.AllowedOrigins) // validated
	drain, drainDone := context.WithCancel(context.Background())
	return &Server{cfg: cfg, edge: e, logger: logger, drain: drain, drainDone: drainDone, http: &http.Server{
		Handler: e,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if ec, ok := c.(*edgeConn); ok {
				return context.WithValue(ctx, edgeConnKey{}, ec)
			}
			return ctx
		},
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ConnState:         cfg.ConnState,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}, nil
}

// Config returns the configuration in effect, defaults filled in.
func (s *Server) Config() ServerConfig { return s.cfg }

// Serve serves on ln until ctx is done, then shuts down: it stops accepting, closes idle
// connections, cuts requests still receiving their body, ends the waits of requests that wait
// on work living on without them (UntilDrain), waits up to ShutdownTimeout for the other
// in-flight requests, and closes whatever is left. Request contexts are not cancelled by
// ctx (only by their client going away). A shutdown that had to close connections is logged,
// not returned: the process still exits cleanly.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base := context.WithValue(context.WithoutCancel(ctx), drainKey{}, s.drain)
	s.http.BaseContext = func(net.Listener) context.Context { return base }
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(edgeListener{Listener: ln, stall: s.cfg.WriteStallTimeout}) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil // Close
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.logger.Info("shutting down", "addr", ln.Addr().String())
	s.edge.shutdown()
	s.drainDone()
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.http.Shutdown(sctx); err != nil {
		s.logger.Warn("shutdown: closing connections still open", "timeout", s.cfg.ShutdownTimeout.String())
		_ = s.http.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Close closes the listener and every connection at once, without waiting for in-flight
// requests, and Serve returns nil. It is for a server that must stop now (a process being
// killed, in tests); a graceful stop ends Serve's context instead.
func (s *Server) Close() error {
	s.drainDone()
	return s.http.Close()
}
