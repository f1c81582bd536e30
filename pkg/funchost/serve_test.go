package funchost_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// serveTest runs a funchost.Server for h with cfg and returns its base URL and a stop function
// that cancels the serve context and returns Serve's result.
func serveTest(t *testing.T, cfg funchost.ServerConfig, h http.Handler) (string, func() error) {
	t.Helper()
	srv, err := funchost.NewServer(cfg, h, funchosttest.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return serveWith(t, srv)
}

// serveWith is serveTest of a server already made.
func serveWith(t *testing.T, srv *funchost.Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var result error
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

func readingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := funchost.ReadRequestBody(r, 1<<20)
		if err != nil {
			funchost.WriteBodyError(w, err)
			return
		}
		_, _ = fmt.Fprintf(w, "read %d", len(body))
	})
}

func TestServerConfig_Validate(t *testing.T) {
	if err := funchost.DefaultServerConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, bad := range []funchost.ServerConfig{
		{BodyReadTimeout: -1}, {IdleTimeout: -time.Second}, {MaxHeaderBytes: 100}, {DrainBodyBytes: -1}, {ShutdownTimeout: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: Validate() = nil, want an error", bad)
		}
		if _, err := funchost.NewServer(bad, http.NotFoundHandler(), nil); err == nil {
			t.Errorf("%+v: NewServer accepted it", bad)
		}
	}
	def := funchost.DefaultServerConfig()
	if def.ReadHeaderTimeout != funchost.DefaultReadHeaderTimeout || def.BodyReadTimeout != funchost.DefaultBodyReadTimeout ||
		def.IdleTimeout != funchost.DefaultIdleTimeout || def.MaxHeaderBytes != funchost.DefaultMaxHeaderBytes {
		t.Errorf("DefaultServerConfig() = %+v", def)
	}
}

// Item 4: a body slower than BodyReadTimeout is cut with 408 and a JSON body.
func TestServer_SlowBody_Is408(t *testing.T) {
	base, _ := serveTest(t, funchost.ServerConfig{BodyReadTimeout: 200 * time.Millisecond}, readingHandler())
	conn := dial(t, base)
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\na")
	got := readResponse(t, conn, bufio.NewReader(conn))
	want := `{"error":"error","detail":"Request body not received in time"}`
	if got.status != http.StatusRequestTimeout || got.body != want {
		t.Errorf("got %d %q, want 408 %q", got.status, got.body, want)
	}
}

// Item 4: an idle keep-alive connection is closed after IdleTimeout, and a long-running
// handler is not cut by the body deadline once its body has been read.
func TestServer_IdleConnection_Closed(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-time.After(300 * time.Millisecond): // longer than BodyReadTimeout
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "done")
	})
	base, _ := serveTest(t, funchost.ServerConfig{IdleTimeout: 100 * time.Millisecond, BodyReadTimeout: 100 * time.Millisecond}, slow)
	conn := dial(t, base)
	br := bufio.NewReader(conn)
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
	if got := readResponse(t, conn, br); got.status != 200 || got.body != "done" {
		t.Fatalf("got %d %q, want 200 done", got.status, got.body)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection: read err %v, want EOF (closed by the server)", err)
	}
}

// Item 4: shutdown cuts a client stalled mid-body (408), closes idle connections, lets an
// in-flight request finish, and returns nil even with a long ShutdownTimeout.
func TestServer_Shutdown_CutsStalledClients(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			started <- struct{}{}
			<-release
			_, _ = io.WriteString(w, "finished")
			return
		}
		readingHandler().ServeHTTP(w, r)
	})
	base, stop := serveTest(t, funchost.ServerConfig{ShutdownTimeout: time.Hour}, h)

	stalled := dial(t, base)
	fmt.Fprintf(stalled, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	idle := dial(t, base)
	idleBR := bufio.NewReader(idle)
	fmt.Fprintf(idle, "GET /read HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := readResponse(t, idle, idleBR); got.status != 200 {
		t.Fatalf("idle connection's request: %d", got.status)
	}
	busy := dial(t, base)
	fmt.Fprintf(busy, "GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started

	// The stalled body is being read; shut down and let the busy request finish.
	result := make(chan error, 1)
	go func() { result <- stop() }()
	if got := readResponse(t, stalled, bufio.NewReader(stalled)); got.status != http.StatusRequestTimeout {
		t.Errorf("stalled client: %d %q, want 408", got.status, got.body)
	}
	_ = idle.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := idleBR.ReadByte(); err == nil {
		t.Error("idle connection still open after shutdown")
	}
	close(release)
	if got := readResponse(t, busy, bufio.NewReader(busy)); got.status != 200 || got.body != "finished" {
		t.Errorf("in-flight request: %d %q, want 200 finished", got.status, got.body)
	}
	if err := <-result; err != nil {
		t.Errorf("Serve returned %v, want nil", err)
	}
}
