package launch

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
)

func TestFromEnv_UserIsolation(t *testing.T) {
	serveOn := map[string]string{envUserIsolation: "on", envIdentityHeader: "X-Forwarded-User", envTrustedProxies: "10.0.0.0/8"}
	for name, tc := range map[string]struct {
		mode    Mode
		env     map[string]string
		on      bool
		wantErr string
	}{
		"off by default":                  {ModeServe, nil, false, ""},
		"off":                             {ModeServe, map[string]string{envUserIsolation: "off", envIdentityHeader: "X"}, false, ""},
		"bad value":                       {ModeServe, map[string]string{envUserIsolation: "yes"}, false, envUserIsolation + ": want on or off"},
		"serve with header and proxies":   {ModeServe, serveOn, true, ""},
		"serve without header":            {ModeServe, map[string]string{envUserIsolation: "on", envTrustedProxies: "10.0.0.0/8"}, false, envIdentityHeader},
		"serve without proxies":           {ModeServe, map[string]string{envUserIsolation: "on", envIdentityHeader: "X-User"}, false, envTrustedProxies},
		"serve with a bad proxy":          {ModeServe, map[string]string{envUserIsolation: "on", envIdentityHeader: "X-User", envTrustedProxies: "10.0.0.0/40"}, false, envTrustedProxies + ": parse trusted proxy"},
		"host, local":                     {ModeCustomHandler, map[string]string{envUserIsolation: "on"}, true, ""},
		"host on Azure with Easy Auth":    {ModeCustomHandler, map[string]string{envUserIsolation: "on", envSiteName: "app", envAuthEnabled: "True"}, true, ""},
		"host on Azure without Easy Auth": {ModeCustomHandler, map[string]string{envUserIsolation: "on", envSiteName: "app"}, false, envAuthEnabled + "=True"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := FromEnv(t.Context(), func(k string) string { return tc.env[k] }, tc.mode, funchosttest.TestLogger(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FromEnv error = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (s.Isolation != nil) != tc.on {
				t.Errorf("Isolation = %v, want on %v", s.Isolation, tc.on)
			}
		})
	}
}

// isolatedSettings are `serve` settings with isolation on, X-User believed from loopback.
func isolatedSettings(t *testing.T) Settings {
	t.Helper()
	s, err := FromEnv(t.Context(), func(k string) string {
		return map[string]string{envUserIsolation: "on", envIdentityHeader: "X-User", envTrustedProxies: "127.0.0.1"}[k]
	}, ModeServe, funchosttest.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAssemble_PassesIsolationToPlatformAndRuns(t *testing.T) {
	s := isolatedSettings(t)
	a, err := Assemble(s, Spec{Platform: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	for _, tr := range funchosttest.Transports(t, a.Host.FunctionApp()) {
		for _, path := range []string{"/api/threads/search", "/api/runs"} {
			method := map[string]string{"/api/threads/search": "POST", "/api/runs": "GET"}[path]
			req := newKeyRequest(t, method, tr.BaseURL+path, tr.FunctionKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode != 401 {
				t.Errorf("%s %s %s without identity: %d, want 401", tr.Name, method, path, res.StatusCode)
			}
		}
	}
}

func newKeyRequest(t *testing.T, method, url, key string) *http.Request {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", key)
	return req
}

// TestAssemble_IsolationScopesHostingWithoutPlatform: without the platform routes there is no
// record of thread owners, so under isolation a thread id on a hosting route is refused
// (403) to a caller without the master key, while a thread-less invoke runs.
func TestAssemble_IsolationScopesHostingWithoutPlatform(t *testing.T) {
	s := isolatedSettings(t)
	echo := host.Func[map[string]any, map[string]any](func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil })
	a, err := Assemble(s, Spec{Hosted: []Hosted{{Name: "echo", Graph: echo}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	for _, tr := range funchosttest.Transports(t, a.Host.FunctionApp()) {
		for body, want := range map[string]int{
			`{"input":{"a":1}}`: 200,
			`{"input":{"a":1},"config":{"configurable":{"thread_id":"t1"}}}`: 403,
		} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", tr.BaseURL+"/api/graphs/echo/invoke", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-functions-key", tr.FunctionKey)
			req.Header.Set("X-User", "alice")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if tr.Name == funchosttest.TransportEmulatedHost {
				want = 401 // under the host only App Service's header is an identity
			}
			if res.StatusCode != want {
				t.Errorf("%s %s: %d, want %d", tr.Name, body, res.StatusCode, want)
			}
		}
	}
}
