package funchosttest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestFunctionApp_Use_SeesTheCallersRequestInEveryMode: a middleware added with Use wraps
// routes registered before and after it, and sees the caller's headers through the custom
// handler protocol as through the standalone server (how trace context reaches a route).
func TestFunctionApp_Use_SeesTheCallersRequestInEveryMode(t *testing.T) {
	app := funchost.NewFunctionApp()
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Header.Get("X-Seen"))
	})
	if err := app.HandleHTTP(funchost.HTTPFunction{Name: "before", Route: "before", AuthLevel: funchost.AuthAnonymous, Handler: echo}); err != nil {
		t.Fatal(err)
	}
	app.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("X-Seen", "mw:"+r.Header.Get("Traceparent"))
			next.ServeHTTP(w, r)
		})
	})
	if err := app.HandleHTTP(funchost.HTTPFunction{Name: "after", Route: "after", AuthLevel: funchost.AuthAnonymous, Handler: echo}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range funchosttest.Transports(t, app) {
		for _, route := range []string{"before", "after"} {
			req, _ := http.NewRequest(http.MethodGet, tr.BaseURL+"/api/"+route, nil)
			req.Header.Set("traceparent", "00-abc-def-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "mw:00-abc-def-01" {
				t.Errorf("%s /api/%s: %q, want the middleware to see the traceparent", tr.Name, route, b)
			}
		}
	}
}
