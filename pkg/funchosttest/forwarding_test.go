package funchosttest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// Forwarding of http-in/http-out functions.
func TestEmulator_Forwarding_RawRequestAndVerbatimResponse(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true}}`, map[string]string{
		"fwd":   httpFunc("function", "graphs/{g}/invoke"),
		"mixed": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"mixed"},{"type":"http","direction":"out","name":"res"},{"type":"queue","direction":"out","name":"q","queueName":"mixed-out"}]}`,
	})
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request, inv invocation) {
		if r.URL.Path == "/mixed" { // JSON mode
			writeResult(w, map[string]any{"res": map[string]any{"body": "json mode"}})
			return
		}
		w.Header().Set("Location", "/elsewhere")
		w.Header().Set("X-Echo-Body", string(inv.Body))
		w.Header()["Content-Type"] = nil // no sniffing: the emulator must not add one either
		w.WriteHeader(http.StatusFound)
		_, _ = w.Write([]byte{0xff, 0x00, 'r', 'a', 'w'})
	}}
	e := start(t, root, rec, funchosttest.Options{Keys: funchost.Keys{HostFunction: map[string]string{"default": "hk"}}})

	if status, _, _ := do(t, "POST", e.URL()+"/api/graphs/g1/invoke", nil, nil); status != 401 {
		t.Fatalf("forwarded route without key = %d, want 401 (the host checks keys before forwarding)", status)
	}
	status, hdr, body := do(t, "POST", e.URL()+"/api/graphs/g1/invoke?code=hk&x=1", strings.NewReader("in"), map[string]string{"X-Custom": "c", "Content-Type": "text/plain"})
	if status != http.StatusFound || body != "\xff\x00raw" || hdr.Get("Location") != "/elsewhere" || hdr.Get("X-Echo-Body") != "in" {
		t.Errorf("forwarded response = %d %q %v, want the handler's 302 verbatim", status, body, hdr)
	}
	if ct := hdr.Values("Content-Type"); ct != nil {
		t.Errorf("Content-Type = %q, want none (verbatim)", ct)
	}
	inv := rec.last(t)
	if inv.Method != "POST" || inv.Path != "/api/graphs/g1/invoke" || inv.Query != "code=hk&x=1" {
		t.Errorf("handler saw %s %s?%s, want the original path and query", inv.Method, inv.Path, inv.Query)
	}
	for k, want := range map[string]string{"X-Custom": "c", "Content-Type": "text/plain", "X-Azure-Functions-Hostversion": funchosttest.HostVersion,
		"User-Agent": "Azure-Functions-Host/" + funchosttest.HostVersion} {
		if got := inv.Header.Get(k); got != want {
			t.Errorf("forwarded header %s = %q, want %q", k, got, want)
		}
	}
	if guidShape(inv.Header.Get("X-Azure-Functions-InvocationId")) != "<guid>" {
		t.Errorf("InvocationId = %q", inv.Header.Get("X-Azure-Functions-InvocationId"))
	}

	// Body only with Content-Length > 0: a chunked request arrives without a body.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", e.URL()+"/api/graphs/g1/invoke", io.NopCloser(strings.NewReader("chunks")))
	req.Header.Set("x-functions-key", "hk")
	req.ContentLength = -1
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if inv := rec.last(t); len(inv.Body) != 0 || inv.Header.Get("x-functions-key") != "hk" {
		t.Errorf("chunked forward: body %q, key header %q; want no body and the key header copied", inv.Body, inv.Header.Get("x-functions-key"))
	}

	// http + queue output is not http-in/http-out: JSON mode.
	if status, _, body := do(t, "GET", e.URL()+"/api/mixed", nil, nil); status != 200 || body != "json mode" {
		t.Errorf("mixed function = %d %q, want JSON mode", status, body)
	}
}

// Item 10: the legacy httpWorker section forwards http-in/http-out functions to
// `/{FunctionName}` (not the original path), and both forwarding modes rebuild the query from
// the host's dictionary: repeated names comma-joined, percent-encoded.
func TestEmulator_Forwarding_LegacyPathAndJoinedQuery(t *testing.T) {
	for _, tc := range []struct {
		name, hostJSON, wantPath string
	}{
		{"legacy httpWorker", `{"httpWorker":{"description":{"defaultExecutablePath":"x"}}}`, "/fwd"},
		{"customHandler forwarding", `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true}}`, "/api/things/7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeApp(t, tc.hostJSON, map[string]string{"fwd": httpFunc("anonymous", "things/{id}")})
			rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { w.WriteHeader(http.StatusAccepted) }}
			e := start(t, root, rec, funchosttest.Options{})
			if status, _, _ := do(t, "GET", e.URL()+"/api/things/7?tag=a&tag=b&Tag=c&sp=x+y", nil, nil); status != http.StatusAccepted {
				t.Fatalf("status %d, want the handler's 202", status)
			}
			inv := rec.last(t)
			if inv.Method != "GET" || inv.Path != tc.wantPath || inv.Query != "tag=a%2Cb%2Cc&sp=x%20y" {
				t.Errorf("handler saw %s %s?%s, want GET %s?tag=a%%2Cb%%2Cc&sp=x%%20y", inv.Method, inv.Path, inv.Query, tc.wantPath)
			}
		})
	}
}

func TestEmulator_ForwardingOverride_ReplacesHostJSON(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true}}`,
		map[string]string{"fn": httpFunc("anonymous", "fn")})
	off := false
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{ForwardingOverride: &off})
	if e.Config().Forwarding {
		t.Error("Config().Forwarding = true after override false")
	}
	if status, _, body := do(t, "GET", e.URL()+"/api/fn", nil, nil); status != 200 || body != "fn" || rec.last(t).Path != "/fn" {
		t.Errorf("got %d %q via %s, want a JSON invocation of /fn", status, body, rec.last(t).Path)
	}
}

// Forwarding through funchost's custom handler reaches the route handler with its params.
func TestEmulator_Forwarding_ThroughFunchost(t *testing.T) {
	app := funchost.NewFunctionApp()
	if err := app.HandleHTTP(funchost.HTTPFunction{Name: "get", Route: "items/{id}", AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte("id=" + r.PathValue("id") + "\x00"))
		})}); err != nil {
		t.Fatal(err)
	}
	on := true
	e := funchosttest.StartApp(t, app, funchosttest.Options{ForwardingOverride: &on})
	status, hdr, body := do(t, "GET", e.URL()+"/api/items/5", nil, nil)
	if status != 200 || body != "id=5\x00" || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("got %d %q %q", status, hdr.Get("Content-Type"), body)
	}
}
