package funchosttest_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// Name order, first match wins, method mismatch falls through, 404, Params.
func TestEmulator_Routing_FirstMatchInNameOrder(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"x"}},"extensions":{"http":{"routePrefix":"v1"}}}`, map[string]string{
		"a_item":   httpFunc("anonymous", "items/{id}", "get"),
		"b_recent": httpFunc("anonymous", "items/recent"),
		"c_post":   httpFunc("anonymous", "items/{id:int}", "post"),
		"d_runs":   httpFunc("anonymous", "graphs/{graph}/runs/{run:guid?}"),
		"e_files":  httpFunc("anonymous", "files/{*path}"),
	})
	e := start(t, root, &recorder{}, funchosttest.Options{})
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/v1/items/recent", 200, "a_item"},   // overlapping: a_item sorts first and wins
		{"PUT", "/v1/items/recent", 200, "b_recent"}, // method mismatch falls through
		{"POST", "/v1/items/12", 200, "c_post"},
		{"POST", "/v1/items/abc", 404, ""}, // constraint fails, nothing else matches POST
		{"GET", "/V1/ITEMS/7", 200, "a_item"},
		{"GET", "/api/items/7", 404, ""},
		{"GET", "/v1/graphs/g/runs", 200, "d_runs"},
		{"GET", "/v1/graphs/g/runs/not-a-guid", 404, ""},
		{"GET", "/v1/files/a/b/c.txt", 200, "e_files"},
		{"GET", "/v1/nothing", 404, ""},
	}
	for _, tc := range cases {
		status, _, body := do(t, tc.method, e.URL()+tc.path, nil, nil)
		if status != tc.status || body != tc.body {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, status, body, tc.status, tc.body)
		}
	}
}

func TestEmulator_Params_NullForUnmatchedOptional(t *testing.T) {
	root := writeApp(t, "", map[string]string{"runs": httpFunc("anonymous", "graphs/{graph}/runs/{run:guid?}")})
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{})
	cases := []struct {
		path string
		want map[string]any
	}{
		{"/api/graphs/g1/runs", map[string]any{"graph": "g1", "run": nil}},
		{"/api/graphs/g%20two/runs/7f0c2a55-0a4f-4c3e-9f1e-2b8f2d1e4b11", map[string]any{"graph": "g two", "run": "7f0c2a55-0a4f-4c3e-9f1e-2b8f2d1e4b11"}},
	}
	for _, tc := range cases {
		if status, _, _ := do(t, "GET", e.URL()+tc.path, nil, nil); status != 200 {
			t.Fatalf("GET %s = %d", tc.path, status)
		}
		req := rec.last(t).Payload["Data"].(map[string]any)["req"].(map[string]any)
		if got := req["Params"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Params for %s = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// Enforced and bypassed auth, no keys, disabled functions.
func TestEmulator_Auth_Modes(t *testing.T) {
	root := writeApp(t, "", map[string]string{
		"anon":  httpFunc("anonymous", "anon"),
		"fn":    httpFunc("function", "fn"),
		"deflt": httpFunc("", "deflt"),
		"adm":   httpFunc("admin", "manage"),
		"off":   `{"disabled": true, "bindings": [{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"off"},{"type":"http","direction":"out","name":"res"}]}`,
		"offf":  `{"disabled": true, "bindings": [{"type":"httpTrigger","direction":"in","name":"req","authLevel":"function","route":"offf"},{"type":"http","direction":"out","name":"res"}]}`,
		"offs":  `{"disabled": "OFFS_DISABLED", "bindings": [{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"offs"},{"type":"http","direction":"out","name":"res"}]}`,
	})
	keys := funchost.Keys{Master: "mk", HostFunction: map[string]string{"default": "hk"}, System: map[string]string{"ext": "sk"},
		Function: map[string]map[string]string{"fn": {"own": "own-key"}}}
	enforced := start(t, root, &recorder{}, funchosttest.Options{Keys: keys, Env: map[string]string{"OFFS_DISABLED": "true"}})
	bypass := start(t, root, &recorder{}, funchosttest.Options{Keys: keys, AuthMode: funchosttest.AuthBypass})
	nokeys := start(t, root, &recorder{}, funchosttest.Options{})
	cases := []struct {
		name   string
		e      *funchosttest.Emulator
		path   string
		key    string
		status int
	}{
		{"anonymous", enforced, "/api/anon", "", 200},
		{"anonymous wrong key", enforced, "/api/anon", "nope", 200},
		{"function no key", enforced, "/api/fn", "", 401},
		{"function host key", enforced, "/api/fn", "hk", 200},
		{"function own key", enforced, "/api/fn", "own-key", 200},
		{"other function's key", enforced, "/api/deflt", "own-key", 401},
		{"default level is function", enforced, "/api/deflt", "hk", 200},
		{"system key is not function", enforced, "/api/fn", "sk", 401},
		{"master key on function", enforced, "/api/fn", "mk", 200},
		{"admin with host key", enforced, "/api/manage", "hk", 401},
		{"admin with master key", enforced, "/api/manage", "mk", 200},
		{"disabled", enforced, "/api/off", "", 404},
		{"disabled by setting", enforced, "/api/offs", "hk", 404},
		{"disabled with master key", enforced, "/api/off", "mk", 200},
		{"disabled function-level without key: auth first", enforced, "/api/offf", "", 401},
		{"disabled function-level with host key", enforced, "/api/offf", "hk", 404},
		{"code matched case-insensitively", enforced, "/api/fn?Code=hk", "", 200},
		{"bypass function", bypass, "/api/fn", "", 200},
		{"bypass admin", bypass, "/api/manage", "", 200},
		{"no keys function", nokeys, "/api/fn", "anything", 401},
		{"no keys admin", nokeys, "/api/manage", "", 401},
		{"no keys anonymous", nokeys, "/api/anon", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.key != "" {
				h["x-functions-key"] = tc.key
			}
			status, _, body := do(t, "GET", tc.e.URL()+tc.path, nil, h)
			if status != tc.status {
				t.Errorf("GET %s with key %q = %d, want %d", tc.path, tc.key, status, tc.status)
			}
			if status == 401 && body != "" {
				t.Errorf("401 body = %q, want empty", body)
			}
		})
	}
}

func TestEmulator_Identities_CarryTheKeyLevel(t *testing.T) {
	root := writeApp(t, "", map[string]string{"fn": httpFunc("function", "fn"), "anon": httpFunc("anonymous", "anon")})
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{Keys: funchost.Keys{Master: "mk", HostFunction: map[string]string{"default": "hk"}}})
	claim := func(typ, value string) string {
		return `{"Issuer":"LOCAL AUTHORITY","OriginalIssuer":"LOCAL AUTHORITY","Properties":{},"Type":"http://schemas.microsoft.com/2017/07/functions/claims/` +
			typ + `","Value":"` + value + `","ValueType":"http://www.w3.org/2001/XMLSchema#string"}`
	}
	identity := func(authType string, claims ...string) string {
		authenticated := "true"
		if authType == "null" {
			authenticated = "false"
		}
		return `[{"Actor":null,"AuthenticationType":` + authType + `,"BootstrapContext":null,"Claims":[` + strings.Join(claims, ",") +
			`],"IsAuthenticated":` + authenticated + `,"Label":null,"Name":null,` +
			`"NameClaimType":"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name","RoleClaimType":"http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}]`
	}
	cases := []struct {
		path, key, want string
	}{
		{"/api/fn?code=hk", "", identity(`"WebJobsAuthLevel"`, claim("authlevel", "Function"), claim("invoke", "true"), claim("keyid", "default"))},
		{"/api/fn", "mk", identity(`"WebJobsAuthLevel"`, claim("authlevel", "Admin"), claim("invoke", "true"), claim("keyid", "master"))},
		{"/api/anon", "", identity("null")},
		{"/api/anon?code=wrong", "", identity("null")},
	}
	for _, tc := range cases {
		h := map[string]string{}
		if tc.key != "" {
			h["x-functions-key"] = tc.key
		}
		if status, _, _ := do(t, "GET", e.URL()+tc.path, nil, h); status != 200 {
			t.Fatalf("GET %s = %d", tc.path, status)
		}
		got, _ := json.Marshal(rec.last(t).Payload["Data"].(map[string]any)["req"].(map[string]any)["Identities"])
		if string(got) != tc.want {
			t.Errorf("Identities for %s = %s, want %s", tc.path, got, tc.want)
		}
	}
}
