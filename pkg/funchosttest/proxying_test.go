package funchosttest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// proxyingHost is a host.json with enableProxyingHttpRequest (and forwarding, which it beats).
const proxyingHost = `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true,"enableProxyingHttpRequest":true}}`

// With proxying the handler gets the caller's own request, as the host's proxy passes it on.
func TestEmulator_Proxying_PassesTheCallersRequest(t *testing.T) {
	root := writeApp(t, proxyingHost, map[string]string{
		"things": httpFunc("function", "things/{id}"),
		"mixed":  `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"mixed"},{"type":"http","direction":"out","name":"res"},{"type":"queue","direction":"out","name":"q","queueName":"mixed-out"}]}`,
	})
	var sawHost atomic.Value
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request, inv invocation) {
		if r.URL.Path == "/mixed" { // JSON mode
			writeResult(w, map[string]any{"res": map[string]any{"body": "json mode"}})
			return
		}
		sawHost.Store(r.Host)
		w.Header().Set("Location", "/elsewhere")
		w.Header()["Content-Type"] = nil
		w.WriteHeader(http.StatusFound)
		_, _ = w.Write([]byte{0xff, 0x00})
	}}
	e := start(t, root, rec, funchosttest.Options{Keys: funchost.Keys{HostFunction: map[string]string{"default": "hk"}}})

	if status, _, _ := do(t, "GET", e.URL()+"/api/things/1", nil, nil); status != 401 {
		t.Fatalf("proxied route without key = %d, want 401 (the host checks keys before proxying)", status)
	}
	// A chunked body, hop-by-hop headers, the caller's own X-Forwarded-* and x-ms-invocation-id.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", e.URL()+"/api/things/1?tag=a&tag=b&sp=x+y", io.NopCloser(strings.NewReader("chunks")))
	req.ContentLength = -1
	for k, v := range map[string]string{"x-functions-key": "hk", "User-Agent": "my-client/1", "X-Custom": "c", "Connection": "X-Hop",
		"X-Hop": "gone", "Proxy-Authorization": "gone", "X-Forwarded-For": "6.6.6.6", "X-Forwarded-Host": "evil", "X-Forwarded-Prefix": "/p",
		"X-Azure-Functions-InvocationId": "spoofed", "x-ms-invocation-id": "mine"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound || string(body) != "\xff\x00" || resp.Header.Get("Location") != "/elsewhere" || resp.Header.Values("Content-Type") != nil {
		t.Errorf("proxied response = %d %q %v, want the handler's 302 verbatim", resp.StatusCode, body, resp.Header)
	}
	inv := rec.last(t)
	if inv.Method != "POST" || inv.Path != "/api/things/1" || inv.Query != "tag=a&tag=b&sp=x+y" || string(inv.Body) != "chunks" {
		t.Errorf("handler saw %s %s?%s body %q, want the original path, raw query and the chunked body", inv.Method, inv.Path, inv.Query, inv.Body)
	}
	frontHost := strings.TrimPrefix(e.URL(), "http://")
	for k, want := range map[string]string{"X-Custom": "c", "User-Agent": "my-client/1", "X-Functions-Key": "hk",
		"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": frontHost, "X-Forwarded-Prefix": "",
		"X-Hop": "", "Proxy-Authorization": "", "Connection": "", "X-Ms-Invocation-Id": "mine",
		"X-Azure-Functions-Hostversion": funchosttest.HostVersion} {
		if got := strings.Join(inv.Header.Values(k), ","); got != want {
			t.Errorf("proxied header %s = %q, want %q", k, got, want)
		}
	}
	if guidShape(inv.Header.Get("X-Azure-Functions-InvocationId")) != "<guid>" {
		t.Errorf("InvocationId = %q, want the host's own", inv.Header.Get("X-Azure-Functions-InvocationId"))
	}
	if h, _ := sawHost.Load().(string); h == frontHost || h == "" {
		t.Errorf("handler's Host = %q, want its own address (the proxy does not pass Host on)", h)
	}

	// Without the caller's x-ms-invocation-id the host adds the invocation id; the Go client's
	// own User-Agent is the caller's here.
	if status, _, _ := do(t, "GET", e.URL()+"/api/things/2?code=hk", nil, nil); status != http.StatusFound {
		t.Fatalf("status %d", status)
	}
	inv = rec.last(t)
	if id := inv.Header.Get("X-Ms-Invocation-Id"); id != inv.Header.Get("X-Azure-Functions-InvocationId") || guidShape(id) != "<guid>" {
		t.Errorf("x-ms-invocation-id = %q, want the invocation id %q", id, inv.Header.Get("X-Azure-Functions-InvocationId"))
	}
	if ua := inv.Header.Get("User-Agent"); strings.HasPrefix(ua, "Azure-Functions-Host") {
		t.Errorf("User-Agent = %q, want the caller's (proxying leaves it)", ua)
	}

	// http + queue output is not http-in/http-out: JSON mode even with proxying on.
	if status, _, body := do(t, "GET", e.URL()+"/api/mixed", nil, nil); status != 200 || body != "json mode" {
		t.Errorf("mixed function = %d %q, want JSON mode", status, body)
	}
}

// streamingHandler writes "first", then waits for release (or its request to end, or at most
// wait) before it writes "second"; finished is set once it has.
func streamingHandler(release <-chan struct{}, wait time.Duration, finished *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "first\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(wait):
		}
		_, _ = io.WriteString(w, "second\n")
		finished.Store(true)
	})
}

// Proxying streams the answer as the handler writes it; forwarding (and a JSON invocation)
// hands it over whole, once the handler is done. The proxied handler waits for the caller to
// have read its first line; the forwarded one cannot be told (its caller sees nothing yet), so
// it goes on after a moment: a caller that read the first line before then was streamed to.
func TestEmulator_Proxying_StreamsWhereForwardingBuffers(t *testing.T) {
	for _, tc := range []struct {
		name, hostJSON string
		wait           time.Duration
		streams        bool
	}{
		{"proxying", proxyingHost, 10 * time.Second, true},
		{"forwarding", `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true}}`, 300 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeApp(t, tc.hostJSON, map[string]string{"events": httpFunc("anonymous", "events")})
			release := make(chan struct{})
			var finished atomic.Bool
			e := start(t, root, streamingHandler(release, tc.wait, &finished), funchosttest.Options{})
			req, _ := http.NewRequestWithContext(t.Context(), "GET", e.URL()+"/api/events", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "first\n" {
				t.Fatalf("first line = %q, %v", line, err)
			}
			if got := !finished.Load(); got != tc.streams {
				t.Errorf("the caller read the first line while the handler was still writing: %v, want %v", got, tc.streams)
			}
			close(release)
			if rest, err := io.ReadAll(br); err != nil || string(rest) != "second\n" {
				t.Errorf("rest = %q, %v", rest, err)
			}
		})
	}
}

// A proxied request ends with its caller: the handler's request context is cancelled.
func TestEmulator_Proxying_EndsWithTheCaller(t *testing.T) {
	root := writeApp(t, proxyingHost, map[string]string{"events": httpFunc("anonymous", "events")})
	ended := make(chan struct{})
	e := start(t, root, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		_, _ = io.WriteString(w, "open\n")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(ended)
	}), funchosttest.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL()+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	cancel()
	_ = resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's request did not end when its caller left")
	}
}

// functionTimeout bounds a proxied invocation until its whole answer is sent: a stream that
// ends in time is a clean response; one that goes on past it (and the grace period) gets the
// handler killed and restarted, and the caller's response cut.
func TestEmulator_Proxying_FunctionTimeoutBoundsTheStream(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableProxyingHttpRequest":true},"functionTimeout":"00:00:01"}`,
		map[string]string{"events": httpFunc("anonymous", "events")})
	release := make(chan struct{})
	var finished atomic.Bool
	e := start(t, root, streamingHandler(release, time.Minute, &finished), funchosttest.Options{})

	// In time: released at once.
	close(release)
	if status, _, body := do(t, "GET", e.URL()+"/api/events", nil, nil); status != 200 || body != "first\nsecond\n" || e.Restarts() != 0 {
		t.Fatalf("stream in time = %d %q, %d restarts; want the whole stream, none", status, body, e.Restarts())
	}

	// Past it: the handler below never ends its stream by itself.
	never := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableProxyingHttpRequest":true},"functionTimeout":"00:00:01"}`,
		map[string]string{"events": httpFunc("anonymous", "events")})
	e = start(t, never, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		_, _ = io.WriteString(w, "tick\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second): // ends by itself only long past functionTimeout
		}
	}), funchosttest.Options{})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.URL()+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if string(data) != "tick\n" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("stream past functionTimeout = %q, %v; want it cut after tick (unexpected EOF)", data, err)
	}
	funchosttest.Eventually(t, "the handler restarted", func() bool { return e.Restarts() == 1 })
}

// enableProxyingHttpRequest binds as the host's configuration binder binds a bool.
func TestParseHostConfig_ProxyingFlag_BindsLikeTheHost(t *testing.T) {
	for value, want := range map[string]bool{`true`: true, `false`: false, `"True"`: true, `" false "`: false, `null`: false, `"TRUE"`: true} {
		cfg, err := funchosttest.ParseHostConfig([]byte(`{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableProxyingHttpRequest":` + value + `}}`))
		if err != nil || cfg.Proxying != want {
			t.Errorf("enableProxyingHttpRequest %s: proxying %v, %v; want %v", value, cfg.Proxying, err, want)
		}
	}
	for _, value := range []string{`1`, `"yes"`, `"on"`, `{}`, `[]`, `""`} {
		if _, err := funchosttest.ParseHostConfig([]byte(`{"customHandler":{"description":{"defaultExecutablePath":"x"},"EnableProxyingHttpRequest":` + value + `}}`)); err == nil {
			t.Errorf("enableProxyingHttpRequest %s: accepted; the host fails to start", value)
		}
	}
}
