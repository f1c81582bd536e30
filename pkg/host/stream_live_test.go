package host

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestStream_Live_SameAnswersAsBuffered_BothTransports: with LiveStream, every stream graph of
// the contract test answers the same status and body as the buffered stream: the same frames,
// bounds, in-band failures and JSON errors before any event.
func TestStream_Live_SameAnswersAsBuffered_BothTransports(t *testing.T) {
	buffered := testApp(t, Options{MaxStreamResponseBytes: testStreamCap}, streamGraphs(make(chan error, 8)), nil)
	live := testApp(t, Options{MaxStreamResponseBytes: testStreamCap, LiveStream: true}, streamGraphs(make(chan error, 8)), nil)
	bodies := []string{`{"input":{}}`, `{`, `{"input":{},"stream_mode":"Nonsense"}`, `{"input":{},"version":"1"}`}
	graphs := []string{"two", "kinds", "none", "mode", "fails", "panics", "nan", "exact", "over", "forever", "invokeonly", "chat"}
	btrs, ltrs := funchosttest.Transports(t, buffered.FunctionApp()), funchosttest.Transports(t, live.FunctionApp())
	for i := range btrs {
		for _, g := range graphs {
			for _, body := range bodies {
				want := call(t, btrs[i], "POST", "/api/graphs/"+g+"/stream", body, btrs[i].FunctionKey)
				got := call(t, ltrs[i], "POST", "/api/graphs/"+g+"/stream", body, ltrs[i].FunctionKey)
				if got.status != want.status || got.body != want.body || got.header.Get("Content-Type") != want.header.Get("Content-Type") {
					t.Errorf("%s %s %s: live %d %q, buffered %d %q", btrs[i].Name, g, body, got.status, got.body, want.status, want.body)
				}
			}
		}
	}
}

// TestStream_Live_FirstFrameBeforeTheRunEnds: served by funcgraph's own server, a live stream's
// first event reaches the client while the graph still runs; the buffered stream's does not.
func TestStream_Live_FirstFrameBeforeTheRunEnds(t *testing.T) {
	for _, liveOn := range []bool{true, false} {
		gate := make(chan struct{})
		graphs := map[string]InvocableGraph{"gated": &fakeGraph{stream: func(ctx context.Context, _ Request, emit func(any) error) error {
			if err := emit(map[string]string{"token": "first"}); err != nil {
				return err
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			return emit(map[string]string{"token": "second"})
		}}}
		app := testApp(t, Options{}, graphs, map[string]RegisterOptions{"gated": {LiveStream: liveOn}})
		tr := funchosttest.Transports(t, app.FunctionApp())[0]
		req, _ := http.NewRequestWithContext(t.Context(), "POST", tr.BaseURL+"/api/graphs/gated/stream", strings.NewReader(`{"input":{}}`))
		req.Header.Set("x-functions-key", tr.FunctionKey)
		req.Header.Set("Content-Type", "application/json")
		got := make(chan string, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			defer res.Body.Close()
			line, _ := bufio.NewReader(res.Body).ReadString('\n')
			got <- line
		}()
		select {
		case line := <-got:
			if !liveOn {
				t.Fatalf("buffered stream sent %q before the run ended", line)
			}
			if line != "event: data\n" {
				t.Fatalf("first line %q", line)
			}
		case <-time.After(map[bool]time.Duration{true: 10 * time.Second, false: 200 * time.Millisecond}[liveOn]):
			// The gate is closed: a live stream's first frame comes however slow the machine;
			// a buffered one cannot come at all.
			if liveOn {
				t.Fatal("the live stream sent nothing while the graph ran")
			}
		}
		close(gate)
		if !liveOn {
			if line := <-got; line != "event: data\n" {
				t.Fatalf("buffered stream's first line %q", line)
			}
		}
	}
}
