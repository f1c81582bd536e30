package funchost_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// smuggled is a whole request hidden after a broken body: it must never be answered.
const smuggled = "GET /api/capped HTTP/1.1\r\nHost: x\r\n\r\n"

// expectClosed reads the first answer on conn, checks its status and `Connection: close`,
// then checks that nothing else comes: the connection ends, so the bytes after the broken
// body are never parsed as a request.
func expectClosed(t *testing.T, conn net.Conn, status int) {
	t.Helper()
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read first answer: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Errorf("first answer %d, want %d", resp.StatusCode, status)
	}
	if !resp.Close {
		t.Errorf("first answer lacks Connection: close (header %q)", resp.Header.Get("Connection"))
	}
	if next, err := http.ReadResponse(br, nil); err == nil {
		t.Fatalf("a second answer (%d) came: the bytes after the broken body were served as a request", next.StatusCode)
	}
}

// A malformed chunked body and a body over the route's cap end their connection; the request
// hidden behind them is never served. Through both servers.
func TestEdge_BrokenBody_EndsTheConnection(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			t.Run("malformed chunk size", func(t *testing.T) {
				conn := dial(t, tr.BaseURL)
				fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nZZ\r\n%s", smuggled)
				expectClosed(t, conn, chunkedStatus(tr, 400))
			})
			t.Run("chunked body over the cap", func(t *testing.T) {
				conn := dial(t, tr.BaseURL)
				chunk := make([]byte, 64<<10)
				fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
				go func() {
					for range (routeCap / len(chunk)) + 2 {
						if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
							return
						}
					}
					fmt.Fprintf(conn, "0\r\n\r\n%s", smuggled)
				}()
				expectClosed(t, conn, chunkedStatus(tr, 413))
			})
		})
	}
}

// chunkedStatus is the first answer to a chunked body: the handler's status on the
// standalone server; 200 through the emulated host, which (as the Functions host does) hands
// the function an empty body when no Content-Length came. Either way the connection ends.
func chunkedStatus(tr funchosttest.Transport, standalone int) int {
	if tr.Name == funchosttest.TransportEmulatedHost {
		return http.StatusOK
	}
	return standalone
}

// A body whose read times out answers 408 and ends its connection; the bytes that arrive
// later are never parsed as a request.
func TestEdge_BodyReadTimeout_EndsTheConnection(t *testing.T) {
	base := funchosttest.Serve(t, funchost.ServerConfig{BodyReadTimeout: 300 * time.Millisecond, ShutdownTimeout: time.Second},
		edgeApp(t).Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)}))
	conn := dial(t, base)
	fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
	go func() {
		time.Sleep(time.Second) // past the body read timeout
		fmt.Fprintf(conn, "0\r\n\r\n%s", smuggled)
	}()
	expectClosed(t, conn, 408)
}

// A request whose body was read to its end keeps its connection: the next request on it is
// served (keep-alive is not lost to the rule above).
func TestEdge_CompleteBody_KeepsTheConnection(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			conn := dial(t, tr.BaseURL)
			br := bufio.NewReader(conn)
			reqs := []string{
				"POST /api/capped HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
				"POST /api/capped HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok",
			}
			if tr.Name == funchosttest.TransportStandalone { // the host drops chunked bodies
				reqs = append(reqs, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", reqs[0])
			}
			for i, req := range reqs {
				_, _ = io.WriteString(conn, req)
				_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Close {
					t.Fatalf("request %d: %d, close=%v; want 200 on a kept connection", i, resp.StatusCode, resp.Close)
				}
			}
		})
	}
}

// A request with both Content-Length and `Transfer-Encoding: chunked` is answered and its
// connection ends, as HTTP/1.1 requires: net/http reads the body chunked, but a front end
// that framed it by the length would take the bytes after it for another request, so none is
// read. Through both servers, with the fields in either order. (A length, then a chunked
// request, on one connection, stay alive: TestEdge_CompleteBody_KeepsTheConnection.)
func TestEdge_ContentLengthAndChunked_EndsTheConnection(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			for name, fields := range map[string]string{
				"length first":  "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
				"chunked first": "Transfer-Encoding: chunked\r\ncontent-length: 40\r\n",
			} {
				t.Run(name, func(t *testing.T) {
					conn := dial(t, tr.BaseURL)
					fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\n%s\r\n3\r\nabc\r\n0\r\n\r\n%s", fields, smuggled)
					expectClosed(t, conn, 200)
				})
			}
		})
	}
}
