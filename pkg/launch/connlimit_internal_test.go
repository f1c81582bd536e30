package launch

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// idle counts the connections l holds that wait for a request.
func (l *connLimit) idle() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.conns {
		if c.idleSince != 0 {
			n++
		}
	}
	return n
}

// TestConnLimit_IdleConnectionsGiveWayToNewOnes: at the cap a new client still gets its
// answer: the connection idle the longest is closed to make room, the others stay usable.
// (net/http marks a connection idle just after the client has its answer: the test waits for
// that before the next step, so the order is the one it sent.)
func TestConnLimit_IdleConnectionsGiveWayToNewOnes(t *testing.T) {
	l := newConnLimit(4, slog.New(slog.DiscardHandler))
	srv, err := funchost.NewServer(funchost.ServerConfig{ConnState: l.connState}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), l.listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	get := func(c net.Conn, r *bufio.Reader) int {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return 0
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0
		}
		return resp.StatusCode
	}
	type client struct {
		c net.Conn
		r *bufio.Reader
	}
	dial := func() client {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return client{c, bufio.NewReader(c)}
	}
	waitIdle := func(n int) {
		for l.idle() != n {
			runtime.Gosched()
		}
	}
	idle := make([]client, 4)
	for i := range idle {
		idle[i] = dial()
		if code := get(idle[i].c, idle[i].r); code != http.StatusOK {
			t.Fatalf("idle connection %d: %d, want 200", i, code)
		}
		waitIdle(i + 1)
	}
	fresh := dial()
	if code := get(fresh.c, fresh.r); code != http.StatusOK {
		t.Fatalf("a new connection at the cap: %d, want 200", code)
	}
	if code := get(idle[0].c, idle[0].r); code != 0 {
		t.Errorf("the connection idle the longest answered %d, want it closed to make room", code)
	}
	for i := 1; i < len(idle); i++ {
		if code := get(idle[i].c, idle[i].r); code != http.StatusOK {
			t.Errorf("idle connection %d after the new one: %d, want 200", i, code)
		}
	}
}
