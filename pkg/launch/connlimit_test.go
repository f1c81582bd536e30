package launch_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// blocker is a graph whose invocation tells entered it started, then waits for release.
type blocker struct {
	entered chan<- struct{}
	release <-chan struct{}
}

func (b blocker) Invoke(ctx context.Context, _ host.Request) (any, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return map[string]any{"done": true}, nil
}

// serveCapped serves greeter and b under `serve` with env, and returns the address; the
// server stops when the test ends.
func serveCapped(t *testing.T, env map[string]string, b blocker) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	build := func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger})
		if err != nil {
			return nil, err
		}
		if err := h.Register(greeter{}, "greeter", host.RegisterOptions{}); err != nil {
			return nil, err
		}
		if err := h.Register(b, "blocker", host.RegisterOptions{}); err != nil {
			return nil, err
		}
		return &launch.App{FunctionApp: h.FunctionApp()}, nil
	}
	env["FUNCGRAPH_FUNCTION_KEY"] = "k1"
	opts := launch.Options{Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: envOf(env), Logger: discard(),
		OnListen: func(a net.Addr) { addrc <- a.String() }}
	go func() { done <- launch.Run(ctx, build, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case addr := <-addrc:
		return addr
	case err := <-done:
		t.Fatalf("Run returned before listening: %v", err)
	}
	return ""
}

// rawConn is one client connection that sends requests by hand and keeps the connection.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{c: c, r: bufio.NewReader(c)}
}

// invoke sends an invoke of graph and returns the answer's status, or 0 with the error
// when the connection ended without one.
func (rc *rawConn) invoke(t *testing.T, graph string) (int, error) {
	t.Helper()
	body := `{"input":{"name":"ada"}}`
	req := "POST /api/graphs/" + graph + "/invoke HTTP/1.1\r\nHost: x\r\nx-functions-key: k1\r\nContent-Type: application/json\r\nContent-Length: " +
		itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(rc.c, req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// TestServe_ConnectionCap_BusyConnectionsKept: with every connection inside a request, a new
// connection past the cap is closed at once; the requests in flight finish, and once they
// have, new connections are served again.
func TestServe_ConnectionCap_BusyConnectionsKept(t *testing.T) {
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	addr := serveCapped(t, map[string]string{"FUNCGRAPH_MAX_CONNECTIONS": "4"}, blocker{entered: entered, release: release})
	busy := make([]*rawConn, 4)
	results := make(chan int, len(busy))
	for i := range busy {
		busy[i] = dialRaw(t, addr)
		go func() {
			code, _ := busy[i].invoke(t, "blocker")
			results <- code
		}()
	}
	for range busy {
		<-entered
	}
	if code, err := dialRaw(t, addr).invoke(t, "greeter"); code != 0 {
		t.Errorf("a connection past the cap with every connection busy answered %d, want it closed (err %v)", code, err)
	}
	close(release)
	for range busy {
		if code := <-results; code != http.StatusOK {
			t.Errorf("a busy connection's request: %d, want 200", code)
		}
	}
	if code, err := dialRaw(t, addr).invoke(t, "greeter"); code != http.StatusOK {
		t.Errorf("a new connection once the requests finished: %d %v, want 200", code, err)
	}
}
