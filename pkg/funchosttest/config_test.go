package funchosttest_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// host.json settings.
func TestParseHostConfig_Settings_ReadLikeTheHost(t *testing.T) {
	cases := []struct {
		name string
		json string
		want funchosttest.HostConfig
	}{
		{"spec example", `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"funcgraph","workingDirectory":"wd","arguments":["--flag","%SOME_APP_SETTING%"]},"enableForwardingHttpRequest":false,"enableProxyingHttpRequest":false},"extensions":{"http":{"routePrefix":"api"},"queues":{"messageEncoding":"base64"}},"functionTimeout":"00:05:00"}`,
			funchosttest.HostConfig{ExecutablePath: "funcgraph", WorkingDirectory: "wd", Arguments: []string{"--flag", "%SOME_APP_SETTING%"}, RoutePrefix: "api", FunctionTimeout: 5 * time.Minute, MessageEncoding: "base64", MaxDequeueCount: 5}},
		{"defaults", `{"customHandler":{"description":{"defaultExecutablePath":"x"}}}`,
			funchosttest.HostConfig{ExecutablePath: "x", RoutePrefix: "api", MessageEncoding: "base64", MaxDequeueCount: 5}},
		{"empty prefix, no encoding, forwarding, proxying", `{"customHandler":{"description":{"defaultExecutablePath":"x"},"enableForwardingHttpRequest":true,"enableProxyingHttpRequest":true},"extensions":{"http":{"routePrefix":""},"queues":{"messageEncoding":"None","maxDequeueCount":2}},"functionTimeout":"1.02:00:30"}`,
			funchosttest.HostConfig{ExecutablePath: "x", Forwarding: true, Proxying: true, RoutePrefix: "", MessageEncoding: "none", MaxDequeueCount: 2, FunctionTimeout: 26*time.Hour + 30*time.Second}},
		{"legacy httpWorker forwards", `{"httpWorker":{"description":{"defaultExecutablePath":"old"}}}`,
			funchosttest.HostConfig{ExecutablePath: "old", Forwarding: true, Legacy: true, RoutePrefix: "api", MessageEncoding: "base64", MaxDequeueCount: 5}},
		{"customHandler wins over httpWorker", `{"httpWorker":{"description":{"defaultExecutablePath":"old"}},"customHandler":{"description":{"defaultExecutablePath":"new"}}}`,
			funchosttest.HostConfig{ExecutablePath: "new", RoutePrefix: "api", MessageEncoding: "base64", MaxDequeueCount: 5}},
		{"unbounded timeout", `{"customHandler":{"description":{"defaultExecutablePath":"x"}},"functionTimeout":"-1"}`,
			funchosttest.HostConfig{ExecutablePath: "x", RoutePrefix: "api", MessageEncoding: "base64", MaxDequeueCount: 5, FunctionTimeoutUnbounded: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := funchosttest.ParseHostConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseHostConfig_Invalid_Fails(t *testing.T) {
	for _, js := range []string{`{`, `{"functionTimeout":"5 minutes"}`, `{"extensions":{"queues":{"messageEncoding":"hex"}}}`} {
		if _, err := funchosttest.ParseHostConfig([]byte(js)); err == nil {
			t.Errorf("ParseHostConfig(%s) succeeded, want an error", js)
		}
	}
}

// Discovery, name validation, order.
func TestStart_Discovery_ValidNamesInHostOrder(t *testing.T) {
	root := writeApp(t, "", map[string]string{
		"gamma": httpFunc("anonymous", "g"), "Beta": httpFunc("anonymous", "b"), "alpha_1": httpFunc("anonymous", "a"),
		"host": httpFunc("anonymous", "h"), "9lives": httpFunc("anonymous", "n"),
	})
	e := start(t, root, &recorder{}, funchosttest.Options{})
	if got, want := e.Functions(), []string{"alpha_1", "Beta", "gamma"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Functions() = %v, want %v", got, want)
	}
	failed := e.FunctionErrors()
	for _, bad := range []string{"host", "9lives"} {
		if failed[bad] == nil {
			t.Errorf("function %q loaded, want a name error", bad)
		}
	}
}

// Default route, reserved prefixes, identical routes fail only the later one.
func TestStart_RouteValidation_FailsOnlyTheOffender(t *testing.T) {
	root := writeApp(t, "", map[string]string{
		"byname": httpFunc("anonymous", ""),
		"adm":    httpFunc("anonymous", "administrators/x"),
		"rt":     httpFunc("anonymous", "/Runtime"),
		"first":  httpFunc("anonymous", "same/{id}", "get"),
		"second": httpFunc("anonymous", "SAME/{id}/", "get", "post"),
		"third":  httpFunc("anonymous", "same/{id}", "delete"),
		"zcatch": httpFunc("anonymous", "same/{other}"),
	})
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{})
	failed := e.FunctionErrors()
	for name, want := range map[string]string{"adm": "built in routes", "rt": "built in routes", "second": "function 'first'"} {
		if err := failed[name]; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FunctionErrors()[%q] = %v, want it to mention %q", name, err, want)
		}
	}
	for _, ok := range []string{"byname", "first", "third", "zcatch"} {
		if failed[ok] != nil {
			t.Errorf("function %q failed: %v", ok, failed[ok])
		}
	}
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/byname", 200, "byname"},
		{"GET", "/api/same/1", 200, "first"},
		{"POST", "/api/same/1", 200, "zcatch"},  // second failed; zcatch has a different template text
		{"DELETE", "/api/same/1", 200, "third"}, // identical text, disjoint methods: allowed
		{"GET", "/api/administrators/x", 404, ""},
	}
	for _, tc := range cases {
		status, _, body := do(t, tc.method, e.URL()+tc.path, nil, nil)
		if status != tc.status || body != tc.body {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, status, body, tc.status, tc.body)
		}
	}
}

func TestStart_MissingAppRoot_Fails(t *testing.T) {
	if _, err := funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: t.TempDir(), Handler: http.NotFoundHandler()}); err == nil {
		t.Fatal("Start without host.json succeeded")
	}
	if _, err := funchosttest.Start(t.Context(), funchosttest.Options{}); err == nil || errors.Is(err, nil) {
		t.Fatal("Start without AppRoot succeeded")
	}
}
