package funchost_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestCallerLevel_BothTransports_KeyLevelAndSource checks what a handler learns about its
// caller: the level of the presented key (from the standalone server's key check, or from
// the auth-level claim of the host's Identities) and where the request came from.
func TestCallerLevel_BothTransports_KeyLevelAndSource(t *testing.T) {
	app := funchost.NewFunctionApp()
	report := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src := map[funchost.Source]string{funchost.SourceHost: "host", funchost.SourceStandalone: "standalone"}[funchost.RequestSource(r.Context())]
		_, _ = io.WriteString(w, string(funchost.CallerLevel(r.Context()))+"|"+src)
	})
	for _, fn := range []funchost.HTTPFunction{
		{Name: "fn", Route: "fn", AuthLevel: funchost.AuthFunction, Handler: report},
		{Name: "anon", Route: "anon", AuthLevel: funchost.AuthAnonymous, Handler: report},
	} {
		if err := app.HandleHTTP(fn); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range funchosttest.Transports(t, app) {
		src := map[string]string{funchosttest.TransportStandalone: "standalone", funchosttest.TransportEmulatedHost: "host"}[tr.Name]
		for _, tc := range []struct {
			route, key, want string
		}{
			{"fn", tr.FunctionKey, "Function|" + src},
			{"fn", tr.MasterKey, "Admin|" + src},
			{"anon", "", "|" + src},
			{"anon", tr.MasterKey, "Admin|" + src},
			{"anon", "wrong", "|" + src},
		} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.BaseURL+"/api/"+tc.route, nil)
			if tc.key != "" {
				req.Header.Set("x-functions-key", tc.key)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK || string(body) != tc.want {
				t.Errorf("%s: %s with key %q: %d %q, want 200 %q", tr.Name, tc.route, tc.key, res.StatusCode, body, tc.want)
			}
		}
	}
}

func TestCallerLevel_OutsideRequest_None(t *testing.T) {
	ctx := funchost.WithInvocationID(context.Background(), "id")
	if got := funchost.CallerLevel(ctx); got != funchost.KeyLevelNone {
		t.Errorf("CallerLevel = %q, want none", got)
	}
	if got := funchost.RequestSource(ctx); got != funchost.SourceUnknown {
		t.Errorf("RequestSource = %v, want unknown", got)
	}
}
