package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// stalledWriter is a client that stopped reading: a write of more than 64 KiB tells started
// and waits for release; smaller ones (an error answer) go through.
type stalledWriter struct {
	header  http.Header
	started chan<- struct{}
	release <-chan struct{}

	mu   sync.Mutex
	code int
	body strings.Builder
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(p) > 64<<10 {
		w.started <- struct{}{}
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.body.Write(p)
	return len(p), nil
}

func (w *stalledWriter) result() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code, w.body.String()
}

// bigHistoryRuns is one run of each of alice and bob, each with a history of about 5 MB.
func bigHistoryRuns() *fakeRuns {
	events := make([]engine.HistoryEvent, 50)
	data, _ := json.Marshal(strings.Repeat("x", 100_000))
	for i := range events {
		events[i] = engine.HistoryEvent{Sequence: int64(i + 1), Type: "node_completed", Name: "n", Node: "n", Data: data}
	}
	return &fakeRuns{
		get: func(_ context.Context, id string) (engine.Run, error) {
			run := pendingRun(id)
			run.Input.Metadata = json.RawMessage(`{"owner": "` + strings.TrimPrefix(id, "run-") + `"}`)
			return run, nil
		},
		history: func(context.Context, string, string, int) (engine.HistoryList, error) {
			return engine.HistoryList{Events: events}, nil
		},
	}
}

// TestHistory_SlowReaders_BoundedPerIdentity: alice asks her 5 MB history again and again
// and reads none of the answers. What her answers hold is counted: once it reaches her bound
// her next request is answered 429 at once, holding nothing, while bob's history is served
// whole; once her clients read, she is served again.
func TestHistory_SlowReaders_BoundedPerIdentity(t *testing.T) {
	svc, err := runsapi.NewService(runsapi.Options{Runs: bigHistoryRuns(), Registry: runsapitest.Registry(t, examples.All),
		Logger: funchosttest.TestLogger(t), Isolation: newIsolation(t, "192.0.2.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	h := app.Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)})
	get := func(w http.ResponseWriter, who string) {
		r := httptest.NewRequest("GET", "/api/runs/run-"+who+"/history", nil)
		r.Header.Set(isolation.PrincipalIDHeader, who)
		h.ServeHTTP(w, r)
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(release); wg.Wait() })
	held, refused := 0, (*stalledWriter)(nil)
	for i := 0; i < 100 && refused == nil; i++ {
		started, done := make(chan struct{}, 1), make(chan struct{})
		w := &stalledWriter{header: http.Header{}, started: started, release: release}
		wg.Go(func() { defer close(done); get(w, "alice") })
		select {
		case <-started:
			held++
		case <-done:
			refused = w
		}
	}
	if refused == nil {
		t.Fatalf("%d of alice's unread 5 MB histories held at once, want a 429 past her bound", held)
	}
	code, body := refused.result()
	want := `{"error": "` + respbudget.IdentityBytesMessage + `"}`
	if code != http.StatusTooManyRequests || body != want || refused.header.Get("Retry-After") == "" {
		t.Fatalf("alice past her bound: %d %s (Retry-After %q), want 429 %s", code, body, refused.header.Get("Retry-After"), want)
	}
	t.Logf("alice: %d unread histories held, the next refused", held)
	if limit := int64(respbudget.DefaultBytesPerIdentity); int64(held)*5_000_000 > limit {
		t.Fatalf("alice holds %d histories of 5 MB, past her bound of %d bytes", held, limit)
	}
	bob := httptest.NewRecorder()
	get(bob, "bob")
	if bob.Code != http.StatusOK || bob.Body.Len() < 5_000_000 {
		t.Fatalf("bob while alice holds her bound: %d, %d bytes; want 200 with his whole history", bob.Code, bob.Body.Len())
	}
	for range held { // alice's clients read their answers
		release <- struct{}{}
	}
	wg.Wait()
	again := httptest.NewRecorder()
	get(again, "alice")
	if again.Code != http.StatusOK {
		t.Fatalf("alice once her answers were read: %d %s", again.Code, again.Body.String())
	}
}

// openStream opens the feed of run as who, event-stream form, and returns the response with
// its body unread (the stream open), or its status and body when refused.
func openStream(t *testing.T, tr funchosttest.Transport, who, run string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", tr.BaseURL+"/api/runs/"+run+"/feed", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("x-functions-key", tr.FunctionKey)
	req.Header.Set(isolation.PrincipalIDHeader, who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp, ""
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, readAll(resp))
	return resp, b.String()
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestFeed_EventStreams_BoundedPerIdentity: under `serve` alice opens event streams on her
// waiting run and keeps them; past her bound the next is answered 429 before it opens, while
// bob still opens his; once she closes one she may open another.
func TestFeed_EventStreams_BoundedPerIdentity(t *testing.T) {
	trs := serveIsolated(t, newIsolation(t, "127.0.0.1/32"))
	var tr funchosttest.Transport
	for _, x := range trs {
		if x.Name != funchosttest.TransportEmulatedHost {
			tr = x
		}
	}
	start := func(who string) string {
		r := as(t, tr, who, tr.FunctionKey, "POST", "/api/graphs/support_agent/runs", `{"input": {"user_message": "refund"}}`)
		var started struct {
			ID string `json:"id"`
		}
		if r.Status != 202 || json.Unmarshal([]byte(r.Body), &started) != nil {
			t.Fatalf("start as %s: %d %s", who, r.Status, r.Body)
		}
		return started.ID
	}
	aliceRun, bobRun := start("alice"), start("bob")
	var open []*http.Response
	var refused *http.Response
	var refusedBody string
	for i := 0; i < 100 && refused == nil; i++ {
		resp, body := openStream(t, tr, "alice", aliceRun)
		if resp.StatusCode == http.StatusOK {
			open = append(open, resp)
			continue
		}
		refused, refusedBody = resp, body
	}
	if refused == nil {
		t.Fatalf("alice holds %d event streams open on one run, want a 429 past her bound", len(open))
	}
	want := `{"error": "` + respbudget.IdentityStreamsMessage + `"}`
	if refused.StatusCode != http.StatusTooManyRequests || refusedBody != want || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("alice's stream past her bound: %d %s (Retry-After %q), want 429 %s", refused.StatusCode, refusedBody, refused.Header.Get("Retry-After"), want)
	}
	if len(open) != respbudget.DefaultStreamsPerIdentity {
		t.Fatalf("alice opened %d streams, want her bound of %d", len(open), respbudget.DefaultStreamsPerIdentity)
	}
	if resp, body := openStream(t, tr, "bob", bobRun); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's stream while alice holds her bound: %d %s", resp.StatusCode, body)
	}
	_ = open[0].Body.Close()
	// The server sees the close once its read of the connection ends: until then her streams
	// are still open.
	for i := 0; ; i++ {
		resp, body := openStream(t, tr, "alice", aliceRun)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || i == 1000 {
			t.Fatalf("alice after closing a stream, attempt %d: %d %s, want 200", i, resp.StatusCode, body)
		}
	}
}
