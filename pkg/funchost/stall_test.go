package funchost_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// stallSeed seeds the slow reader's pauses and read sizes.
const stallSeed = 31

// stallTimeout is the WriteStallTimeout of these tests: small, so a stalled client is cut
// quickly; every bound the tests wait for is far above it.
const stallTimeout = 300 * time.Millisecond

// generous bounds every wait of these tests: only a server that never cuts a stalled client
// (or cuts a reading one) can take that long.
const generous = 30 * time.Second

// smallBuffers is a listener whose connections have small kernel send buffers, so a response
// of a few MiB cannot hide in them: the server's writes block as soon as the client stops
// reading.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// handlerResult is how a response's handler ended: its first write error, and whether its
// request's context was cancelled.
type handlerResult struct {
	writeErr  error
	cancelled bool
}

// stallApp serves, anonymous:
//   - /api/chunks?n=<bytes>: n bytes in 64 KiB writes, reporting its end on results;
//   - /api/whole?n=<bytes>: n bytes in one write;
//   - /api/sse?frames=<k>&gap=<duration>: k flushed frames, gap apart.
func stallApp(t *testing.T, results chan<- handlerResult) *funchost.FunctionApp {
	t.Helper()
	app := funchost.NewFunctionApp()
	size := func(r *http.Request) int {
		var n int
		_, _ = fmt.Sscan(r.URL.Query().Get("n"), &n)
		return n
	}
	chunk := make([]byte, 64<<10)
	routes := []funchost.HTTPFunction{
		{Name: "chunks", Route: "chunks", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var res handlerResult
			defer func() {
				res.cancelled = r.Context().Err() != nil
				results <- res
			}()
			w.Header().Set("Content-Type", "application/octet-stream")
			for left := size(r); left > 0 && res.writeErr == nil; left -= len(chunk) {
				_, res.writeErr = w.Write(chunk[:min(left, len(chunk))])
			}
		})},
		{Name: "whole", Route: "whole", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(make([]byte, size(r)))
		})},
		{Name: "sse", Route: "sse", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var frames int
			_, _ = fmt.Sscan(r.URL.Query().Get("frames"), &frames)
			gap, _ := time.ParseDuration(r.URL.Query().Get("gap"))
			w.Header().Set("Content-Type", "text/event-stream")
			rc := http.NewResponseController(w)
			for i := range frames {
				if i > 0 {
					time.Sleep(gap)
				}
				if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
					return
				}
				if err := rc.Flush(); err != nil {
					return
				}
			}
		})},
	}
	for _, fn := range routes {
		fn.AuthLevel = funchost.AuthAnonymous
		if err := app.HandleHTTP(fn); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// serveStall serves app on a funchost.Server with the test's stall timeout, behind
// smallBuffers, and returns its address.
func serveStall(t *testing.T, app *funchost.FunctionApp) string {
	t.Helper()
	srv, err := funchost.NewServer(funchost.ServerConfig{WriteStallTimeout: stallTimeout, ShutdownTimeout: time.Second},
		app.Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)}), funchosttest.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, smallBuffers{ln}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dialSmall opens a connection whose receive buffer is small.
func dialSmall(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tc := c.(*net.TCPConn)
	_ = tc.SetReadBuffer(32 << 10)
	t.Cleanup(func() { _ = tc.Close() })
	return tc
}

// Clients that ask for a large response and read nothing are cut: each handler's write fails,
// its request's context is cancelled, it returns (releasing what it held), and the server
// closes the connection. The case, 40 clients and 5 MB, scaled to 8 clients and 4 MiB.
func TestServer_StalledReaders_AreCut(t *testing.T) {
	const clients, size = 8, 4 << 20
	results := make(chan handlerResult, clients)
	addr := serveStall(t, stallApp(t, results))
	conns := make([]*net.TCPConn, clients)
	for i := range conns {
		conns[i] = dialSmall(t, addr)
		fmt.Fprintf(conns[i], "GET /api/chunks?n=%d HTTP/1.1\r\nHost: x\r\n\r\n", size)
	}
	timeout := time.After(generous)
	for i := range clients {
		select {
		case res := <-results:
			if res.writeErr == nil || !res.cancelled {
				t.Errorf("handler %d: write error %v, context cancelled %v; want a failed write and a cancelled context", i, res.writeErr, res.cancelled)
			}
		case <-timeout:
			t.Fatalf("after %s, %d of %d handlers still write to clients that do not read", generous, clients-i, clients)
		}
	}
	// The server closed each connection: reading what was buffered ends (EOF or a reset)
	// before the whole response came.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(generous))
		n, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection %d still open after %s (%d bytes read)", i, generous, n)
		}
		if n >= size {
			t.Errorf("connection %d: the whole response (%d bytes) came to a client that did not read", i, n)
		}
	}
}

// A client that reads slowly, pausing now and then (seeded), gets a response many times
// larger than the buffers between it and the server, written in a single write that takes
// far longer than the stall timeout: the deadline is renewed as the client takes bytes.
func TestServer_SlowReader_GetsTheWholeResponse(t *testing.T) {
	const size = 4 << 20
	addr := serveStall(t, stallApp(t, make(chan handlerResult, 1)))
	c := dialSmall(t, addr)
	fmt.Fprintf(c, "GET /api/whole?n=%d HTTP/1.1\r\nHost: x\r\n\r\n", size)
	rng := rand.New(rand.NewPCG(stallSeed, 1))
	_ = c.SetReadDeadline(time.Now().Add(generous))
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 1024), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 32<<10)
	var got int
	var paused time.Duration
	for {
		n, err := resp.Body.Read(buf[:1+rng.IntN(len(buf))])
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
		pause := time.Duration(rng.IntN(10)) * time.Millisecond // well under the stall timeout
		paused += pause
		time.Sleep(pause)
	}
	if got != size {
		t.Fatalf("got %d bytes, want %d", got, size)
	}
	t.Logf("seed %d: %d bytes, the reader paused %s in all (stall timeout %s)", stallSeed, got, paused, stallTimeout)
}

// An SSE stream idle between frames for longer than the stall timeout is not cut: only a
// write in progress is bounded.
func TestServer_IdleStream_IsNotCut(t *testing.T) {
	addr := serveStall(t, stallApp(t, make(chan handlerResult, 1)))
	c := dialSmall(t, addr)
	const frames = 4
	fmt.Fprintf(c, "GET /api/sse?frames=%d&gap=%s HTTP/1.1\r\nHost: x\r\n\r\n", frames, 3*stallTimeout)
	_ = c.SetReadDeadline(time.Now().Add(generous))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("stream cut: %v (got %q)", err, body)
	}
	if n := strings.Count(string(body), "data: "); n != frames {
		t.Errorf("got %d frames, want %d: %q", n, frames, body)
	}
}

// A stalled client costs the others nothing: while clients that read nothing wait to be cut,
// clients that read are served on the same server.
func TestServer_StalledReaders_DoNotHoldOthers(t *testing.T) {
	const stalled, size = 4, 4 << 20
	results := make(chan handlerResult, stalled)
	addr := serveStall(t, stallApp(t, results))
	for range stalled {
		c := dialSmall(t, addr)
		fmt.Fprintf(c, "GET /api/chunks?n=%d HTTP/1.1\r\nHost: x\r\n\r\n", size)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			c := dialSmall(t, addr)
			fmt.Fprintf(c, "GET /api/whole?n=%d HTTP/1.1\r\nHost: x\r\n\r\n", 1<<20)
			_ = c.SetReadDeadline(time.Now().Add(generous))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Errorf("reader %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 1<<20 {
				t.Errorf("reader %d: %d bytes, %v", i, n, err)
			}
		})
	}
	wg.Wait()
	for range stalled {
		select {
		case <-results:
		case <-time.After(generous):
			t.Fatal("a stalled client was never cut")
		}
	}
}
