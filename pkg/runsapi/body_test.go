package runsapi_test

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
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

// TestRunsAPI_DeepValues_Are400_NothingStored: input, metadata and event payloads are capped
// at the hosting routes' nesting depth (32, the top-level object being 1): 5 000 levels is a
// 400 in the runs API's shape, and nothing reaches the engine.
func TestRunsAPI_DeepValues_Are400_NothingStored(t *testing.T) {
	var started, raised atomic.Int32
	runs := &fakeRuns{
		start: func(context.Context, engine.StartRunRequest) (engine.Run, error) {
			started.Add(1)
			return pendingRun("r"), nil
		},
		get: func(context.Context, string) (engine.Run, error) { return pendingRun("r"), nil },
		raise: func(context.Context, string, string, json.RawMessage) error {
			raised.Add(1)
			return nil
		},
	}
	deep := func(levels int) string {
		return strings.Repeat(`{"a":`, levels-1) + "{}" + strings.Repeat("}", levels-1)
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{AuthLevel: "anonymous"}) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, c := range []struct{ what, path, body, want string }{
				{"input", "/api/graphs/data_pipeline/runs", `{"input":` + deep(5000) + `}`, "input"},
				{"metadata", "/api/graphs/data_pipeline/runs", `{"metadata":` + deep(33) + `}`, "metadata"},
				{"input first", "/api/graphs/data_pipeline/runs", `{"metadata":` + deep(33) + `,"input":` + deep(33) + `}`, "input"},
				{"event payload", "/api/runs/r/events/approval", `[` + deep(32) + `]`, "request body"},
			} {
				runsapitest.Call(t, tr, "POST", c.path, c.body).
					Expect(t, c.what, 400, `{"error": "`+c.want+` exceeds maximum nesting depth of 32"}`)
			}
			if n, m := started.Load(), raised.Load(); n != 0 || m != 0 {
				t.Fatalf("deep values reached the engine: %d starts, %d events", n, m)
			}
			// At the cap, both pass.
			runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"input":`+deep(32)+`,"metadata":`+deep(32)+`}`).Expect(t, "32 levels", 202, "")
			runsapitest.Call(t, tr, "POST", "/api/runs/r/events/approval", deep(32)).Expect(t, "event of 32 levels", 202, "")
			started.Store(0)
			raised.Store(0)
		})
	}
}

// TestRunsAPI_CrossSiteStart_Refused: a page on another site that posts text/plain to
// POST /api/graphs/{graph_name}/runs?code=<key> starts nothing: 403 before the route runs.
// The same request from outside a browser starts the run.
func TestRunsAPI_CrossSiteStart_Refused(t *testing.T) {
	var started atomic.Int32
	runs := &fakeRuns{start: func(context.Context, engine.StartRunRequest) (engine.Run, error) {
		started.Add(1)
		return pendingRun("r"), nil
	}}
	for _, tr := range serveFake(t, runs, runsapi.Options{AuthLevel: "function"}) {
		t.Run(tr.Name, func(t *testing.T) {
			path := "/api/graphs/data_pipeline/runs?code=" + tr.FunctionKey
			body := `{"input":{"source_url":"https://example.com/data"}}`
			runsapitest.Call(t, tr, "POST", path, body, "Content-Type", "text/plain", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example").
				Expect(t, "cross-site start", 403, `{"error":"error","detail":"Forbidden: cross-site request"}`)
			if n := started.Load(); n != 0 {
				t.Fatalf("a cross-site request started %d runs", n)
			}
			runsapitest.Call(t, tr, "POST", path, body, "Content-Type", "text/plain").Expect(t, "server-to-server start", 202, "")
			started.Store(0)
		})
	}
}
