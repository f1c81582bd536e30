package funchost_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// routeCap is the body cap of the test app's "capped" route, which (like the hosting routes)
// rejects a Content-Length over it without reading the body.
const routeCap = 1 << 20

// edgeApp is the app of the edge tests: an anonymous route that reads its body through
// funchost.ReadRequestBody (capped), a function-level route, and nothing else.
func edgeApp(t testing.TB) *funchost.FunctionApp {
	t.Helper()
	app := funchost.NewFunctionApp()
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := funchost.ReadRequestBody(r, routeCap)
		if err != nil {
			funchost.WriteBodyError(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(w, "read %d", len(body))
	})
	for _, fn := range []funchost.HTTPFunction{
		{Name: "capped", Route: "capped", AuthLevel: funchost.AuthAnonymous, Handler: read},
		{Name: "keyed", Route: "keyed", AuthLevel: funchost.AuthFunction, Handler: read},
	} {
		if err := app.HandleHTTP(fn); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// rawResponse is a status line and body read off a raw connection.
type rawResponse struct {
	status int
	body   string
}

// readResponse reads one HTTP response from br. A response that does not come within a minute
// fails the test (that is the hang being tested, not a speed check).
func readResponse(t testing.TB, conn net.Conn, br *bufio.Reader) rawResponse {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{resp.StatusCode, string(b)}
}

func dial(t testing.TB, baseURL string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Item 1: a rejected `Expect: 100-continue` request gets its final status at once, without a
// 100 and without waiting for the body; an accepted one gets 100 Continue, then its answer.
func TestEdge_ExpectContinue_RejectionAnswersAtOnce(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name, path string
				length     int64
				status     int
			}{
				{"unknown route", "/api/nowhere", 5000, 404},
				{"no key", "/api/keyed", 5000, 401},
				{"over the server's cap", "/api/capped", funchost.DefaultMaxRequestBodyBytes + 1, 413},
				{"over the route's cap", "/api/capped", routeCap + 1, 413},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if tr.Name == funchosttest.TransportEmulatedHost && tc.length == routeCap+1 {
						t.Skip("the host reads the whole body before invoking; the route's cap answers after it")
					}
					conn := dial(t, tr.BaseURL)
					fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", tc.path, tc.length)
					got := readResponse(t, conn, bufio.NewReader(conn))
					if got.status != tc.status {
						t.Errorf("status %d (%q), want %d", got.status, got.body, tc.status)
					}
				})
			}
			conn := dial(t, tr.BaseURL)
			br := bufio.NewReader(conn)
			fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
			_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
			line, err := br.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
				t.Fatalf("accepted request: first line %q (%v), want 100 Continue", line, err)
			}
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(conn, "hello")
			if got := readResponse(t, conn, br); got.status != 200 || got.body != "read 5" {
				t.Errorf("accepted request: %d %q", got.status, got.body)
			}
		})
	}
}

// Item 2: a rejection of a request whose body is not read still reaches a client that sends
// its whole body before reading and asked for `Connection: close`, every time.
func TestEdge_RejectionWithUnreadBody_ReachesTheClient(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			cases := []struct {
				name, path string
				status     int
			}{
				{"unknown route", "/api/nowhere", 404},
				{"no key", "/api/keyed", 401},
				{"over the route's cap", "/api/capped", 413},
			}
			for _, tc := range cases {
				for i, size := range []int{routeCap + 1, routeCap + 1, 5 << 20} {
					body := strings.Repeat("x", size)
					conn := dial(t, tr.BaseURL)
					// Like Python's urllib: send everything, then read.
					_ = conn.SetWriteDeadline(time.Now().Add(time.Minute))
					fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", tc.path, len(body))
					_, _ = io.WriteString(conn, body)
					got := readResponse(t, conn, bufio.NewReader(conn))
					if got.status != tc.status {
						t.Fatalf("%s, attempt %d: status %d, want %d", tc.name, i, got.status, tc.status)
					}
					_ = conn.Close()
				}
			}
		})
	}
}

// Item 3: a malformed chunked body is a 400 with a clear JSON message, not a 500.
func TestEdge_MalformedChunkedBody_Is400(t *testing.T) {
	trs := funchosttest.Transports(t, edgeApp(t))
	conn := dial(t, trs[0].BaseURL) // the host drops chunked bodies (no Content-Length)
	fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n")
	got := readResponse(t, conn, bufio.NewReader(conn))
	want := `{"error":"error","detail":"Malformed request body: invalid chunked encoding"}`
	if got.status != 400 || got.body != want {
		t.Errorf("got %d %q, want 400 %q", got.status, got.body, want)
	}
}

// Item 5: a chunked body over the cap stops at the cap with a correct message; a
// Content-Length over the server's cap is a 413 with a JSON body on the standalone server (the
// host's own 413 has an empty body).
func TestEdge_OverLimitBodies_StopAtTheCap(t *testing.T) {
	trs := funchosttest.Transports(t, edgeApp(t))
	conn := dial(t, trs[0].BaseURL)
	go func() {
		fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := strings.Repeat("y", 64<<10)
		for range 4 * routeCap / len(chunk) {
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(conn, "0\r\n\r\n")
	}()
	got := readResponse(t, conn, bufio.NewReader(conn))
	want := fmt.Sprintf(`{"error":"error","detail":"Request body too large: more than %d bytes (max %d bytes)"}`, routeCap, routeCap)
	if got.status != 413 || got.body != want {
		t.Errorf("chunked over the cap: %d %q, want 413 %q", got.status, got.body, want)
	}
	for _, tr := range trs {
		conn := dial(t, tr.BaseURL)
		fmt.Fprintf(conn, "POST /api/capped HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", funchost.DefaultMaxRequestBodyBytes+1)
		got := readResponse(t, conn, bufio.NewReader(conn))
		want := fmt.Sprintf(`{"error":"error","detail":"Request body too large: %d bytes (max %d bytes)"}`, funchost.DefaultMaxRequestBodyBytes+1, funchost.DefaultMaxRequestBodyBytes)
		if tr.Name == funchosttest.TransportEmulatedHost {
			want = ""
		}
		if got.status != 413 || got.body != want {
			t.Errorf("%s: Content-Length over the server's cap: %d %q, want 413 %q", tr.Name, got.status, got.body, want)
		}
	}
}

// Item 7: an empty x-functions-key header means no key (code is not read then), and `?Code=`
// is matched case-insensitively; on both transports.
func TestEdge_Keys_EmptyHeaderAndCodeCase(t *testing.T) {
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				query  string
				header []string // nil: no header; []string{""}: present and empty
				status int
			}{
				{"code", "?code=" + tr.FunctionKey, nil, 200},
				{"Code", "?Code=" + tr.FunctionKey, nil, 200},
				{"CODE after another parameter", "?a=1&CODE=" + tr.FunctionKey, nil, 200},
				{"empty header hides code", "?code=" + tr.FunctionKey, []string{""}, 401},
				{"header wins over code", "?code=" + tr.FunctionKey, []string{"wrong"}, 401},
				{"header", "", []string{tr.FunctionKey}, 200},
			} {
				req, err := http.NewRequestWithContext(t.Context(), "GET", tr.BaseURL+"/api/keyed"+tc.query, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc.header != nil {
					req.Header["X-Functions-Key"] = tc.header
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
				}
			}
		})
	}
}
