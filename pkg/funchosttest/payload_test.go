package funchosttest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// The JSON-mode request, compared with golden payloads.
func TestEmulator_HTTPPayload_MatchesGolden(t *testing.T) {
	root := writeApp(t, "", map[string]string{"echo": httpFunc("function", "things/{id}/{opt?}")})
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{Keys: funchost.Keys{HostFunction: map[string]string{"default": "hk"}}})
	cases := []struct {
		name    string
		method  string
		path    string
		body    func() io.Reader
		chunked bool
		header  http.Header
	}{
		{name: "http_get_query", method: "GET", path: "/api/things/42?code=hk&tag=a&tag=b&empty=",
			header: http.Header{"Accept": {"application/json"}}},
		{name: "http_post_text_body", method: "POST", path: "/api/things/42/x?code=hk",
			body:   func() io.Reader { return strings.NewReader(`{"input":"héllo"}`) },
			header: http.Header{"Content-Type": {"application/json"}}},
		{name: "http_post_octet_stream_base64", method: "POST", path: "/api/things/7?code=hk",
			body:   func() io.Reader { return strings.NewReader("\x00\x01binary\xff") },
			header: http.Header{"Content-Type": {"application/octet-stream"}}},
		{name: "http_header_arrays", method: "PUT", path: "/api/things/9",
			header: http.Header{"X-Functions-Key": {"hk"}, "X-Multi": {"one", "two"}, "Cookie": {"a=1"}}},
		{name: "http_post_empty_body", method: "POST", path: "/api/things/1?code=hk",
			body:   func() io.Reader { return strings.NewReader("") },
			header: http.Header{"Content-Type": {"text/plain"}}},
		{name: "http_post_chunked_loses_body", method: "POST", path: "/api/things/1?code=hk", chunked: true,
			body:   func() io.Reader { return strings.NewReader("streamed") },
			header: http.Header{"Content-Type": {"text/plain"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				body = tc.body()
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, e.URL()+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, vs := range tc.header {
				req.Header[k] = vs
			}
			if tc.chunked {
				req.ContentLength = -1
				req.TransferEncoding = []string{"chunked"}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			checkGolden(t, tc.name, rec.last(t))
		})
	}
}

// The handler the emulator talks to sees a JSON POST to /{FunctionName}, which funchost's
// custom handler decodes back into the caller's request.
func TestEmulator_HTTPPayload_RoundTripsThroughFunchost(t *testing.T) {
	app := funchost.NewFunctionApp()
	var got struct {
		method, path, query, body, id, opt, invocation string
	}
	err := app.HandleHTTP(funchost.HTTPFunction{Name: "echo", Route: "things/{id}/{opt?}", AuthLevel: funchost.AuthAnonymous,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got.method, got.path, got.query, got.body = r.Method, r.URL.Path, r.URL.RawQuery, string(b)
			got.id, got.opt, got.invocation = r.PathValue("id"), r.PathValue("opt"), funchost.InvocationID(r.Context())
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "done")
		})})
	if err != nil {
		t.Fatal(err)
	}
	e := funchosttest.StartApp(t, app, funchosttest.Options{})
	status, hdr, body := do(t, "POST", e.URL()+"/api/things/42?tag=a&tag=b", strings.NewReader("payload"), nil)
	if status != 200 || body != "done" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("got %d %q %q", status, hdr.Get("Content-Type"), body)
	}
	if got.method != "POST" || got.path != "/api/things/42" || got.query != "tag=a&tag=b" || got.body != "payload" || got.id != "42" || got.opt != "" || got.invocation == "" {
		t.Errorf("handler saw %+v", got)
	}
}
