package platform

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// TestCrossSite_ThreadCreate_Refused_BothTransports: a page on another site that posts a form
// (or text/plain) to POST /api/threads with the user's key in the URL creates nothing: 403
// before the route runs. The same request from outside a browser still creates the thread.
func TestCrossSite_ThreadCreate_Refused_BothTransports(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			post := func(tid, contentType string, browser ...string) (int, string) {
				req, err := http.NewRequestWithContext(context.Background(), "POST", tr.BaseURL+"/api/threads?code="+tr.FunctionKey,
					strings.NewReader(`{"thread_id":"`+tid+`"}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", contentType)
				for i := 0; i+1 < len(browser); i += 2 {
					req.Header.Set(browser[i], browser[i+1])
				}
				r, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Body.Close()
				b, _ := io.ReadAll(r.Body)
				return r.StatusCode, string(b)
			}
			for _, c := range []struct{ name, contentType string }{
				{"form", "application/x-www-form-urlencoded"},
				{"text", "text/plain"},
			} {
				tid := "csrf-" + c.name + "-" + tr.Name
				for _, browser := range [][]string{
					{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"},
					{"Origin", "https://evil.example"}, // a browser without Sec-Fetch-Site
				} {
					if status, body := post(tid, c.contentType, browser...); status != 403 || body != `{"error":"error","detail":"Forbidden: cross-site request"}` {
						t.Errorf("%s %v: %d %s, want 403", c.name, browser, status, body)
					}
				}
				if _, err := f.store.Get(context.Background(), tid); !errors.Is(err, threads.ErrThreadNotFound) {
					t.Errorf("%s: a refused request created thread %s (%v)", c.name, tid, err)
				}
				if status, body := post(tid, c.contentType); status != 200 {
					t.Errorf("%s without browser headers: %d %s, want 200", c.name, status, body)
				}
			}
		})
	}
}
