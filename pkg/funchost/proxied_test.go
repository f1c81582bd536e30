package funchost_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// A request the host proxies is served as proxied, with its deadline and the caller's Host;
// a forwarded one or a JSON invocation is not.
func TestCustomHandler_Proxied_ToldByHostJSON(t *testing.T) {
	type seen struct {
		Proxied  bool
		Deadline bool
		Host     string
		Source   funchost.Source
	}
	app := funchost.NewFunctionApp()
	if err := app.HandleHTTP(funchost.HTTPFunction{Name: "probe", Route: "probe", AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			deadline, ok := funchost.Proxied(r.Context())
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(seen{ok, !deadline.IsZero() && time.Until(deadline) > 0, r.Host, funchost.RequestSource(r.Context())})
		})}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, flags string
		opts        funchost.HandlerOptions
		want        bool
	}{
		{"proxying", `"enableProxyingHttpRequest":true`, funchost.HandlerOptions{Proxying: true, FunctionTimeout: time.Minute}, true},
		{"forwarding", `"enableForwardingHttpRequest":true`, funchost.HandlerOptions{}, false},
		{"JSON invocations", `"enableForwardingHttpRequest":false`, funchost.HandlerOptions{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			hostJSON := `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"x"},` + tc.flags + `}}`
			if err := os.WriteFile(filepath.Join(root, "host.json"), []byte(hostJSON), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := app.WriteFunctions(root); err != nil {
				t.Fatal(err)
			}
			e, err := funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: root, Handler: app.CustomHandler(tc.opts), Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			req, _ := http.NewRequestWithContext(t.Context(), "GET", e.URL()+"/api/probe", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got seen
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := seen{tc.want, tc.want, req.URL.Host, funchost.SourceHost}
			if got != want {
				t.Errorf("handler saw %+v, want %+v", got, want)
			}
		})
	}
}
