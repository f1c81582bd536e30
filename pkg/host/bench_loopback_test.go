package host_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The loopback benchmarks measure what a deployment sees: every request crosses a real HTTP
// connection on 127.0.0.1, as the Functions host's call to the custom handler does, and the
// peer is a bare net/http server doing the same JSON echo behind the same kind of connection.

func loopbackClient(b *testing.B, h http.Handler) (*http.Client, string) {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, srv.URL
}

func postOnce(b *testing.B, c *http.Client, url string, payload []byte) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(payload))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("hello there")) {
		b.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

func BenchmarkInvokeEchoCustomHandlerLoopback(b *testing.B) {
	c, base := loopbackClient(b, customHandler(b))
	payload := invocation(b, echoBody("bench"))
	latencies(b, func() { postOnce(b, c, base+"/fg_echo_agent_invoke", payload) })
}

func BenchmarkInvokeBareNetHTTPLoopback(b *testing.B) {
	c, base := loopbackClient(b, http.HandlerFunc(bareEcho))
	body := echoBody("bench")
	latencies(b, func() { postOnce(b, c, base+"/api/graphs/echo_agent/invoke", body) })
}

// loopbackParallel64 posts from 64 goroutines, each on its own thread, and reports p99 in ms.
func loopbackParallel64(b *testing.B, h http.Handler, path string, payloadFor func(thread string) []byte) {
	c, base := loopbackClient(b, h)
	runParallel64(b, func(p []byte) { postOnce(b, c, base+path, p) }, payloadFor)
}

func BenchmarkInvokeEchoCustomHandlerLoopbackParallel64(b *testing.B) {
	loopbackParallel64(b, customHandler(b), "/fg_echo_agent_invoke", func(thread string) []byte { return invocation(b, echoBody(thread)) })
}

func BenchmarkInvokeBareNetHTTPLoopbackParallel64(b *testing.B) {
	loopbackParallel64(b, http.HandlerFunc(bareEcho), "/api/graphs/echo_agent/invoke", echoBody)
}
