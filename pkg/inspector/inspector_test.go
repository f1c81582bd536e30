package inspector_test

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/inspector"
)

// TestHandler_ServesOnePageWithItsOwnScriptOnly: the page is one HTML document holding the
// style and every script inline, and its CSP allows exactly those (by hash) and the page's
// own origin; the key that may be in the URL is never sent on as a Referer.
func TestHandler_ServesOnePageWithItsOwnScriptOnly(t *testing.T) {
	srv := httptest.NewServer(inspector.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/inspector?code=k")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	page := string(body)
	for k, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if res.StatusCode != 200 || strings.Contains(page, "<!--SCRIPT-->") || strings.Contains(page, "<!--STYLE-->") {
		t.Fatalf("%d, page not assembled:\n%.300s", res.StatusCode, page)
	}
	for _, want := range []string{"function renderGraph", "function showRuns", "function showRun(", "function renderTimeline", "function apiCall", "function runLink", "init();"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	script := regexp.MustCompile(`(?s)<script>(.*)</script>`).FindStringSubmatch(page)
	style := regexp.MustCompile(`(?s)<style>(.*)</style>`).FindStringSubmatch(page)
	if script == nil || style == nil {
		t.Fatal("no inline script or style")
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, src := range []string{"script-src " + sha(script[1]), "style-src " + sha(style[1]), "default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, src) {
			t.Errorf("CSP %q lacks %q", csp, src)
		}
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// TestFunction_GuardedLikeTheRunsAPI: the page is a GET route at the level it is given; on the
// standalone server a missing or wrong key is the host's 401, the right one (header or code)
// the page.
func TestFunction_GuardedLikeTheRunsAPI(t *testing.T) {
	app := funchost.NewFunctionApp()
	if err := app.HandleHTTP(inspector.Function(funchost.AuthFunction)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}))
	defer srv.Close()
	for _, tt := range []struct {
		query string
		want  int
	}{{"", 401}, {"?code=wrong", 401}, {"?code=k", 200}} {
		res, err := http.Get(srv.URL + "/api/inspector" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("GET /api/inspector%s = %d, want %d", tt.query, res.StatusCode, tt.want)
		}
	}
}
