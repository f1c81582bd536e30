package funchost_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// crossSiteBody is the refusal of a browser's cross-site request, in the hosting shape.
const crossSiteBody = `{"error":"error","detail":"Forbidden: cross-site request"}`

// allowedOrigin is the browser origin the allowlist fixture lets through.
const allowedOrigin = "https://app.example"

// send makes one request with headers (name, value pairs) and returns its status and body.
func send(t *testing.T, method, url, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// crossSiteTransports are the edge app behind the standalone server, the emulated host in its
// default JSON mode and the emulated host forwarding requests, each allowing allowed.
func crossSiteTransports(t *testing.T, allowed ...string) []funchosttest.Transport {
	t.Helper()
	cfg := funchost.ServerConfig{AllowedOrigins: allowed}
	trs := funchosttest.TransportsConfig(t, edgeApp(t), cfg)
	forwarding := true
	emu := funchosttest.StartApp(t, edgeApp(t), funchosttest.Options{ForwardingOverride: &forwarding, HandlerServer: cfg})
	return append(trs, funchosttest.Transport{Name: "emulated-host-forwarding", BaseURL: emu.URL()})
}

// A browser's cross-site request that may change state is refused 403 before any handler
// runs, on every transport; a same-origin one, a safe method and a request from outside a
// browser (no Sec-Fetch-Site, no Origin) are served as before.
func TestCrossSite_UnsafeBrowserRequests_Are403(t *testing.T) {
	for _, tr := range crossSiteTransports(t) {
		t.Run(tr.Name, func(t *testing.T) {
			self := "http://" + strings.TrimPrefix(tr.BaseURL, "http://")
			for _, tc := range []struct {
				name, method string
				headers      []string
				refused      bool
			}{
				{"curl: no browser headers", "POST", nil, false},
				{"Sec-Fetch-Site cross-site", "POST", []string{"Sec-Fetch-Site", "cross-site"}, true},
				{"Sec-Fetch-Site same-site", "POST", []string{"Sec-Fetch-Site", "same-site"}, true},
				{"Sec-Fetch-Site same-origin", "POST", []string{"Sec-Fetch-Site", "same-origin", "Origin", self}, false},
				{"Sec-Fetch-Site none", "POST", []string{"Sec-Fetch-Site", "none"}, false},
				{"text/plain from another Origin", "POST", []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}, true},
				{"form from another Origin", "POST", []string{"Origin", "https://evil.example", "Content-Type", "application/x-www-form-urlencoded"}, true},
				{"Origin null", "POST", []string{"Origin", "null"}, true},
				{"Origin on another port", "POST", []string{"Origin", "http://127.0.0.1:1"}, true},
				{"Origin of the request's own host", "POST", []string{"Origin", self}, false},
				{"PUT cross-site", "PUT", []string{"Sec-Fetch-Site", "cross-site"}, true},
				{"PATCH cross-site", "PATCH", []string{"Sec-Fetch-Site", "cross-site"}, true},
				{"DELETE cross-site", "DELETE", []string{"Sec-Fetch-Site", "cross-site"}, true},
				{"GET cross-site", "GET", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, false},
				{"OPTIONS cross-site", "OPTIONS", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, false},
				{"not allowed here", "POST", []string{"Sec-Fetch-Site", "cross-site", "Origin", allowedOrigin}, true},
			} {
				status, body := send(t, tc.method, tr.BaseURL+"/api/capped", "a=1", tc.headers...)
				switch {
				case tc.refused && (status != 403 || body != crossSiteBody):
					t.Errorf("%s: %d %s, want 403 %s", tc.name, status, body, crossSiteBody)
				case !tc.refused && status != 200:
					t.Errorf("%s: %d %s, want 200", tc.name, status, body)
				}
			}
		})
	}
}

// A key in the URL does not make a cross-site request acceptable; a request without a key is
// refused by the key check first (401 with an empty body, as the Functions host answers
// before the app sees anything).
func TestCrossSite_KeyedRoute(t *testing.T) {
	for _, tr := range crossSiteTransports(t) {
		if tr.FunctionKey == "" {
			continue // the forwarding emulator has no keys
		}
		t.Run(tr.Name, func(t *testing.T) {
			if status, body := send(t, "POST", tr.BaseURL+"/api/keyed?code="+tr.FunctionKey, "x", "Sec-Fetch-Site", "cross-site", "Content-Type", "text/plain"); status != 403 || body != crossSiteBody {
				t.Errorf("cross-site with ?code=: %d %s, want 403", status, body)
			}
			if status, _ := send(t, "POST", tr.BaseURL+"/api/keyed", "x", "Sec-Fetch-Site", "cross-site"); status != 401 {
				t.Errorf("cross-site without a key: %d, want 401", status)
			}
			if status, body := send(t, "POST", tr.BaseURL+"/api/keyed?code="+tr.FunctionKey, "x"); status != 200 {
				t.Errorf("server-to-server with ?code=: %d %s, want 200", status, body)
			}
		})
	}
}

// ServerConfig.AllowedOrigins lets a known browser origin change state, and only that one.
func TestCrossSite_AllowedOrigins(t *testing.T) {
	for _, tr := range crossSiteTransports(t, "HTTPS://App.Example:443/") { // normalised
		t.Run(tr.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				headers []string
				refused bool
			}{
				{"allowed, cross-site", []string{"Sec-Fetch-Site", "cross-site", "Origin", allowedOrigin}, false},
				{"allowed, same-site", []string{"Sec-Fetch-Site", "same-site", "Origin", allowedOrigin}, false},
				{"allowed, old browser", []string{"Origin", allowedOrigin}, false},
				{"allowed origin over http", []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://app.example"}, true},
				{"a suffix of the allowed origin", []string{"Sec-Fetch-Site", "cross-site", "Origin", allowedOrigin + ".evil.example"}, true},
				{"another origin", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, true},
			} {
				status, body := send(t, "POST", tr.BaseURL+"/api/capped", "x", tc.headers...)
				switch {
				case tc.refused && (status != 403 || body != crossSiteBody):
					t.Errorf("%s: %d %s, want 403", tc.name, status, body)
				case !tc.refused && status != 200:
					t.Errorf("%s: %d %s, want 200", tc.name, status, body)
				}
			}
		})
	}
}

func TestServerConfig_Validate_AllowedOrigins(t *testing.T) {
	for _, tc := range []struct {
		origins []string
		ok      bool
	}{
		{[]string{"https://app.example", "http://localhost:3000", "https://[::1]:8443"}, true},
		{[]string{"https://app.example/"}, true},
		{[]string{"*"}, false},
		{[]string{"app.example"}, false},
		{[]string{"https://app.example/path"}, false},
		{[]string{"ftp://app.example"}, false},
		{[]string{"https://user@app.example"}, false},
	} {
		err := funchost.ServerConfig{AllowedOrigins: tc.origins}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok %v", tc.origins, err, tc.ok)
		}
	}
}
