package funchosttest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The per-call timeout is functionTimeout + 1 minute, unbounded for "-1".
func TestStart_CallTimeout_FunctionTimeoutPlusOneMinute(t *testing.T) {
	cases := []struct {
		host string
		want time.Duration
	}{
		{`{"functionTimeout":"00:05:00"}`, 6 * time.Minute},
		{`{"functionTimeout":"00:00:30.5"}`, 90*time.Second + 500*time.Millisecond},
		{`{}`, 31 * time.Minute}, // the host's default functionTimeout (30 min) applies
		{`{"functionTimeout":"-1"}`, 0},
	}
	for _, tc := range cases {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "host.json"), []byte(tc.host), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Start(t.Context(), Options{AppRoot: root, Handler: http.NotFoundHandler()})
		if err != nil {
			t.Fatal(err)
		}
		if e.client.Timeout != tc.want || e.forwarder.Timeout != tc.want {
			t.Errorf("%s: timeouts %v / %v, want %v", tc.host, e.client.Timeout, e.forwarder.Timeout, tc.want)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
}

func FuzzParseHTTPOutput(f *testing.F) {
	for _, s := range []string{`{"statusCode":201,"headers":{"a":["x"],"b":null},"body":{"k":1}}`, `"text"`, `{"status":"204"}`, `[1,2]`, `{"headers":{"Content-Type":null}}`, `{"statusCode":1e3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || !json.Valid(data) {
			return
		}
		resp, err := parseHTTPOutput(json.RawMessage(data))
		if err == nil && (resp.status < 100 || resp.status > 999) {
			t.Fatalf("status %d out of range for %s", resp.status, data)
		}
	})
}

func FuzzParseHostConfig(f *testing.F) {
	for _, s := range []string{`{"customHandler":{"description":{"defaultExecutablePath":"x"}},"functionTimeout":"1.00:00:00"}`, `{"httpWorker":{}}`, `{"extensions":{"http":{"routePrefix":"/v1/"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseHostConfig(data)
		if err == nil && (cfg.MaxDequeueCount < 1 || cfg.FunctionTimeout < 0 || (cfg.MessageEncoding != "base64" && cfg.MessageEncoding != "none")) {
			t.Fatalf("invalid config %+v from %s", cfg, data)
		}
	})
}

// The base64 quirk decodes as .NET does: white space ignored, any valid base64 decoded.
func TestBase64Quirk_DecodesAsDotNet(t *testing.T) {
	if got, ok := base64Quirk(" dGVz dA== "); !ok || string(got) != "test" {
		t.Errorf("Base64Quirk with spaces = %q, %v; want test", got, ok)
	}
	if got, ok := base64Quirk("test"); !ok || string(got) != "\xb5\xeb\x2d" {
		t.Errorf(`Base64Quirk("test") = %q, %v; want the 3 decoded bytes`, got, ok)
	}
}
