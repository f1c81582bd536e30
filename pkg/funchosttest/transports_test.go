package funchosttest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

func tinyApp(t testing.TB) *funchost.FunctionApp {
	t.Helper()
	app := funchost.NewFunctionApp()
	text := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, s+r.PathValue("id"))
		})
	}
	for _, fn := range []funchost.HTTPFunction{
		{Name: "ping", Methods: []string{"GET"}, Route: "ping", AuthLevel: funchost.AuthAnonymous, Handler: text("pong")},
		{Name: "item", Methods: []string{"GET"}, Route: "items/{id}", AuthLevel: funchost.AuthFunction, Handler: text("item ")},
		{Name: "manage", Route: "manage", AuthLevel: funchost.AuthAdmin, Handler: text("managed")},
	} {
		if err := app.HandleHTTP(fn); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

func TestTransports_Auth_SameOnBothTransports(t *testing.T) {
	app := tinyApp(t)
	transports := funchosttest.Transports(t, app)
	if len(transports) != 2 || transports[0].Name != funchosttest.TransportStandalone || transports[1].Name != funchosttest.TransportEmulatedHost {
		t.Fatalf("transports = %+v", transports)
	}
	type key int
	const (
		noKey key = iota
		wrongKey
		functionKey
		masterKey
	)
	cases := []struct {
		name       string
		method     string
		path       string
		header     key
		query      key
		wantStatus int
		wantBody   string
	}{
		{"anonymous without key", "GET", "/api/ping", noKey, noKey, 200, "pong"},
		{"anonymous with wrong key passes", "GET", "/api/ping", wrongKey, noKey, 200, "pong"},
		{"function without key", "GET", "/api/items/7", noKey, noKey, 401, ""},
		{"function with wrong key", "GET", "/api/items/7", wrongKey, noKey, 401, ""},
		{"function with function key", "GET", "/api/items/7", functionKey, noKey, 200, "item 7"},
		{"function with code query", "GET", "/api/items/7", noKey, functionKey, 200, "item 7"},
		{"header beats query", "GET", "/api/items/7", wrongKey, functionKey, 401, ""},
		{"header beats wrong query", "GET", "/api/items/7", functionKey, wrongKey, 200, "item 7"},
		{"function with master key", "GET", "/api/items/7", masterKey, noKey, 200, "item 7"},
		{"admin with function key", "POST", "/api/manage", functionKey, noKey, 401, ""},
		{"admin with master key", "POST", "/api/manage", masterKey, noKey, 200, "managed"},
		{"escaped parameter", "GET", "/api/items/100%25", functionKey, noKey, 200, "item 100%"},
		{"unknown route", "GET", "/api/nothing", masterKey, noKey, 404, ""},
		{"method mismatch is 404", "POST", "/api/ping", noKey, noKey, 404, ""},
		{"outside the prefix", "GET", "/ping", noKey, noKey, 404, ""},
	}
	for _, tr := range transports {
		keyOf := func(k key) string {
			switch k {
			case wrongKey:
				return "wrong-key"
			case functionKey:
				return tr.FunctionKey
			case masterKey:
				return tr.MasterKey
			}
			return ""
		}
		for _, tc := range cases {
			t.Run(tr.Name+"/"+tc.name, func(t *testing.T) {
				url := tr.BaseURL + tc.path
				if k := keyOf(tc.query); k != "" {
					url += "?code=" + k
				}
				req, err := http.NewRequestWithContext(t.Context(), tc.method, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				if k := keyOf(tc.header); k != "" {
					req.Header.Set("x-functions-key", k)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.wantStatus || strings.TrimSpace(string(body)) != tc.wantBody {
					t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.wantStatus, tc.wantBody)
				}
			})
		}
	}
}
