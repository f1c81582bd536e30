package funchost

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func authApp(t *testing.T) *FunctionApp {
	t.Helper()
	app := NewFunctionApp()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("served")) })
	mustHandle(t, app, HTTPFunction{Name: "anon", Route: "anon", AuthLevel: AuthAnonymous, Handler: ok})
	mustHandle(t, app, HTTPFunction{Name: "func", Route: "func", AuthLevel: AuthFunction, Handler: ok})
	mustHandle(t, app, HTTPFunction{Name: "adm", Route: "adm", AuthLevel: AuthAdmin, Handler: ok})
	mustHandle(t, app, HTTPFunction{Name: "own", Route: "own", Handler: ok})
	return app
}

var testKeys = Keys{
	Master:       "master-key",
	HostFunction: map[string]string{"default": "host-key"},
	System:       map[string]string{"sys": "system-key"},
	Function:     map[string]map[string]string{"OWN": {"default": "own-key"}},
}

func TestStandalone_Auth(t *testing.T) {
	h := authApp(t).Standalone(StandaloneOptions{Keys: testKeys, Logger: testLogger(t)})
	tests := []struct {
		name, target, header string
		want                 int
	}{
		{"anonymous without key", "/api/anon", "", 200},
		{"anonymous with wrong key", "/api/anon?code=wrong", "wrong", 200},
		{"function without key", "/api/func", "", 401},
		{"function wrong key", "/api/func", "wrong", 401},
		{"function host key header", "/api/func", "host-key", 200},
		{"function host key query", "/api/func?code=host-key", "", 200},
		{"header beats query", "/api/func?code=host-key", "wrong", 401},
		{"header beats query, good header", "/api/func?code=wrong", "host-key", 200},
		{"first code value", "/api/func?code=host-key&code=wrong", "", 200},
		{"function master key", "/api/func", "master-key", 200},
		{"function system key refused", "/api/func", "system-key", 401},
		{"function own key elsewhere", "/api/func", "own-key", 401},
		{"own function key", "/api/own", "own-key", 200},
		{"admin with host key", "/api/adm", "host-key", 401},
		{"admin with master key", "/api/adm", "master-key", 200},
		{"unknown route", "/api/nope", "master-key", 404},
		{"outside prefix", "/func", "master-key", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			if tc.header != "" {
				req.Header.Set("X-Functions-Key", tc.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d", rec.Code, tc.want)
			}
			if tc.want != 200 && rec.Body.Len() != 0 {
				t.Fatalf("body = %q, want empty", rec.Body.String())
			}
		})
	}
}

func TestStandalone_NoKeysConfigured_FunctionRoutes401(t *testing.T) {
	h := authApp(t).Standalone(StandaloneOptions{Logger: testLogger(t)})
	for target, want := range map[string]int{"/api/anon": 200, "/api/func?code=": 401, "/api/adm": 401} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != want {
			t.Errorf("%s = %d, want %d", target, rec.Code, want)
		}
	}
}

func TestStandalone_Limits(t *testing.T) {
	h := authApp(t).Standalone(StandaloneOptions{Keys: testKeys, MaxRequestBodyBytes: 10, Logger: testLogger(t)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/anon", strings.NewReader(strings.Repeat("x", 11))))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("large body = %d, want 413", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/anon?q="+strings.Repeat("x", MaxURLBytes), nil))
	if rec.Code != http.StatusRequestURITooLong {
		t.Errorf("long URL = %d, want 414", rec.Code)
	}
}

func TestStandalone_RoutePrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix, target string
		want           int
	}{
		{"", "/anon", 200},
		{"", "/api/anon", 404},
		{"v1/x", "/V1/X/anon", 200},
		{"v1/x", "/v1/xanon", 404},
	} {
		app := authApp(t)
		app.SetRoutePrefix(tc.prefix)
		rec := httptest.NewRecorder()
		app.Standalone(StandaloneOptions{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.want {
			t.Errorf("prefix %q %s = %d, want %d", tc.prefix, tc.target, rec.Code, tc.want)
		}
	}
}

func TestParseKeys(t *testing.T) {
	k, err := parseKeys([]byte(`{"masterKey":{"name":"master","value":"m"},"functionKeys":[{"name":"default","value":"f"}],
		"systemKeys":[{"name":"s","value":"s1"}],"functions":{"fg_x":[{"name":"default","value":"x1"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if k.Master != "m" || k.HostFunction["default"] != "f" || k.System["s"] != "s1" || k.Function["fg_x"]["default"] != "x1" {
		t.Fatalf("keys = %+v", k)
	}
	for name, doc := range map[string]string{
		"encrypted master": `{"masterKey":{"value":"m","encrypted":true}}`,
		"empty value":      `{"functionKeys":[{"name":"a","value":""}]}`,
		"not json":         `{`,
	} {
		if _, err := parseKeys([]byte(doc)); err == nil {
			t.Errorf("%s: want an error", name)
		} else if strings.Contains(err.Error(), `"m"`) {
			t.Errorf("%s: error leaks a key value: %v", name, err)
		}
	}
	if !(Keys{}).Empty() || k.Empty() {
		t.Error("Empty() is wrong")
	}
}
