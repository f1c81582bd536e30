package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// The invoke benchmarks compare echo_agent served through the custom-handler JSON payload path
// (invocation JSON in, http output JSON out, both in-process with ServeHTTP) with a bare
// net/http handler doing the same JSON echo from the same request body.

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))

func echoBody(thread string) []byte {
	return []byte(`{"input":{"messages":[{"role":"user","content":"hello there"}]},"config":{"configurable":{"thread_id":"` + thread + `"}}}`)
}

// invocation builds the host's JSON invocation of fg_echo_agent_invoke around body.
func invocation(b testing.TB, body []byte) []byte {
	payload, err := json.Marshal(map[string]any{
		"Data": map[string]any{"req": map[string]any{
			"Url": "http://localhost:7071/api/graphs/echo_agent/invoke", "Method": "POST", "Query": map[string]string{},
			"Headers": map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(body))}},
			"Params":  map[string]string{}, "Body": string(body),
		}},
		"Metadata": map[string]any{"sys": map[string]string{"MethodName": "fg_echo_agent_invoke"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return payload
}

func customHandler(b testing.TB) http.Handler {
	app, err := host.New(host.Options{Logger: discardLogger})
	if err != nil {
		b.Fatal(err)
	}
	// Two messages kept: the output is the same as the bare echo's.
	if err := app.Register(echoagent.New(echoagent.Options{MaxMessages: 2}), echoagent.Name, host.RegisterOptions{}); err != nil {
		b.Fatal(err)
	}
	return app.FunctionApp().CustomHandler(funchost.HandlerOptions{Logger: discardLogger})
}

// bareEcho is the baseline: decode, echo, encode with encoding/json.
func bareEcho(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	var req struct {
		Input  echoagent.State `json:"input"`
		Config struct {
			Configurable struct {
				ThreadID string `json:"thread_id"`
			} `json:"configurable"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "json", http.StatusBadRequest)
		return
	}
	msgs := req.Input.Messages
	reply := echoagent.Message{Role: "assistant"}
	if len(msgs) > 0 {
		reply.Content = msgs[len(msgs)-1].Content
	}
	out, err := json.Marshal(map[string]any{"output": echoagent.State{Messages: append(msgs, reply)}})
	if err != nil {
		http.Error(w, "encode", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func serveOnce(b testing.TB, h http.Handler, path string, payload []byte) {
	rec := httptest.NewRecorder()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1"+path, bytes.NewReader(payload))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte("hello there")) {
		b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
}

func BenchmarkInvokeEchoCustomHandler(b *testing.B) {
	h := customHandler(b)
	payload := invocation(b, echoBody("bench"))
	serveOnce(b, h, "/fg_echo_agent_invoke", payload)
	latencies(b, func() { serveOnce(b, h, "/fg_echo_agent_invoke", payload) })
}

func BenchmarkInvokeBareNetHTTP(b *testing.B) {
	h := http.HandlerFunc(bareEcho)
	body := echoBody("bench")
	latencies(b, func() { serveOnce(b, h, "/api/graphs/echo_agent/invoke", body) })
}

// runParallel64 calls serve from 64 goroutines, each with its own thread's payload, and
// reports the p99 latency in milliseconds.
func runParallel64(b *testing.B, serve func(payload []byte), payloadFor func(thread string) []byte) {
	b.ReportAllocs()
	b.SetParallelism(max(1, 64/max(1, runtimeProcs())))
	var next atomic.Int64
	var mu sync.Mutex
	var all []time.Duration
	b.RunParallel(func(pb *testing.PB) {
		payload := payloadFor(fmt.Sprintf("t%d", next.Add(1)))
		lat := make([]time.Duration, 0, 1024)
		for pb.Next() {
			start := time.Now()
			serve(payload)
			lat = append(lat, time.Since(start))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	if len(all) > 0 {
		slices.Sort(all)
		p99 := all[min(len(all)-1, len(all)*99/100)]
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	}
}

func BenchmarkInvokeEchoCustomHandlerParallel64(b *testing.B) {
	h := customHandler(b)
	runParallel64(b, func(p []byte) { serveOnce(b, h, "/fg_echo_agent_invoke", p) },
		func(thread string) []byte { return invocation(b, echoBody(thread)) })
}

func BenchmarkInvokeBareNetHTTPParallel64(b *testing.B) {
	h := http.HandlerFunc(bareEcho)
	runParallel64(b, func(p []byte) { serveOnce(b, h, "/api/graphs/echo_agent/invoke", p) }, echoBody)
}

// flood emits small events until the host refuses one.
type flood struct{}

func (flood) Invoke(context.Context, host.Request) (any, error) { return map[string]any{}, nil }

func (flood) Stream(ctx context.Context, _ host.Request, emit func(any) error) error {
	chunk := json.RawMessage(`{"messages": [{"role": "assistant", "content": "0123456789012345678901234567890123456789"}]}`)
	for {
		if err := emit(chunk); err != nil {
			return err
		}
	}
}

// countingWriter discards a response, counting its body bytes.
type countingWriter struct {
	h http.Header
	n int
}

func (w *countingWriter) Header() http.Header         { return w.h }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkStreamOverflow streams until the 1 MiB cap is hit: allocated bytes per op stay near
// the cap.
func BenchmarkStreamOverflow(b *testing.B) {
	app, err := host.New(host.Options{Logger: discardLogger, AuthLevel: funchost.AuthAnonymous})
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Register(flood{}, "flood", host.RegisterOptions{}); err != nil {
		b.Fatal(err)
	}
	h := app.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: discardLogger})
	body := []byte(`{"input":{}}`)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		w := &countingWriter{h: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/graphs/flood/stream", bytes.NewReader(body)))
		n = w.n
	}
	if n < host.DefaultMaxStreamResponseBytes-200 {
		b.Fatalf("body of %d bytes did not reach the cap", n)
	}
	b.ReportMetric(float64(n), "body-bytes")
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkInvokeEchoStandalone serves the same request through the standalone router
// (anonymous graph, no invocation envelope), isolating this package's cost from the
// custom-handler protocol's.
func BenchmarkInvokeEchoStandalone(b *testing.B) {
	app, err := host.New(host.Options{Logger: discardLogger, AuthLevel: funchost.AuthAnonymous})
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Register(echoagent.New(echoagent.Options{MaxMessages: 2}), echoagent.Name, host.RegisterOptions{}); err != nil {
		b.Fatal(err)
	}
	h := app.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: discardLogger})
	body := echoBody("bench")
	b.ReportAllocs()
	for b.Loop() {
		serveOnce(b, h, "/api/graphs/echo_agent/invoke", body)
	}
}
