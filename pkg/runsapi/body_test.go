package runsapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// TestRunsAPI_MalformedChunkedBody_Is400: a chunk size of "zz" is the client's fault: 400 with
// a clear message, not a 500 (hardening item 3). Chunked bodies reach only the standalone
// server: the Functions host drops them.
func TestRunsAPI_MalformedChunkedBody_Is400(t *testing.T) {
	var started atomic.Int32
	runs := &fakeRuns{start: func(context.Context, engine.StartRunRequest) (engine.Run, error) {
		started.Add(1)
		return pendingRun("r"), nil
	}}
	tr := serveFake(t, runs, runsapi.Options{MaxRequestBodyBytes: 1024})[0]
	send := func(path, chunks string) (int, string) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(tr.BaseURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nx-functions-key: %s\r\nTransfer-Encoding: chunked\r\n\r\n%s", path, tr.FunctionKey, chunks)
		}()
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := send("/api/graphs/data_pipeline/runs", "3\r\n{}{\r\nzz\r\n")
	if status != http.StatusBadRequest || body != `{"error": "Malformed request body: invalid chunked encoding"}` {
		t.Errorf("malformed chunked start: %d %s", status, body)
	}
	big := strings.Repeat("a", 4096)
	status, body = send("/api/graphs/data_pipeline/runs", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big))
	if status != http.StatusRequestEntityTooLarge || body != `{"error": "request body too large"}` {
		t.Errorf("chunked start over the cap: %d %s", status, body)
	}
	if n := started.Load(); n != 0 {
		t.Errorf("a rejected body started %d runs", n)
	}
}
