package exampleapp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost"
)

const fuzzKey = "fuzz-function-key"

var fuzzApp = sync.OnceValues(func() (http.Handler, error) {
	app, err := exampleapp.Build(exampleapp.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	if err := app.Start(context.Background()); err != nil {
		return nil, err
	}
	// The app lives as long as the fuzzing process: its engine keeps running the runs the
	// inputs start.
	return app.FunctionApp.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": fuzzKey}}, Logger: slog.New(slog.DiscardHandler),
	}), nil
})

var fuzzMethods = []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut}

// FuzzHTTPEdge sends arbitrary requests to every route family of the example app (hosting,
// durable runs, platform, meta) in memory: whatever the method, path, query and body, the
// answer is a 2xx or a 4xx, or one of the 5xx the contracts give for a request the app
// cannot serve by design (501 for a platform option it does not implement, 503 with
// Retry-After for a busy run); never a 500 and never a panic.
func FuzzHTTPEdge(f *testing.F) {
	seeds := []struct {
		method     byte
		path, body string
	}{
		{0, "health", ""},
		{0, "health/details", ""},
		{0, "openapi.json", ""},
		{1, "graphs/echo_agent/invoke", `{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"f1"}}}`},
		{1, "graphs/echo_agent/stream", `{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"f1"}},"stream_mode":"values"}`},
		{0, "graphs/echo_agent/threads/f1/state", ""},
		{1, "graphs/support_agent/runs", `{"instance_id":"f1","input":{"user_message":"refund"}}`},
		{1, "graphs/data_pipeline/runs", `{"input":{"source_url":"u"},"metadata":{"k":1}}`},
		{1, "graphs/fg_platform_run/runs", `{"input":{}}`},
		{0, "runs/f1", ""},
		{1, "runs/f1/events/approval", `{"approved":true}`},
		{1, "runs/f1/cancel", `{"reason":"x"}`},
		{0, "runs?graph_name=support_agent&status=Running&limit=5&created_after=2025-01-01T00:00:00Z", ""},
		{0, "runs?created_before=2300-01-01T00:00:00Z&continuation_token=AA", ""},
		{0, "runs/f1/history?limit=1&continuation_token=eAB5", ""},
		{3, "runs/f1", ""},
		{1, "threads", `{"metadata":{"a":1}}`},
		{1, "threads/search", `{"limit":10,"status":"idle"}`},
		{1, "threads/count", `{}`},
		{0, "threads/f1", ""},
		{2, "threads/f1", `{"metadata":{"b":2}}`},
		{3, "threads/f1", ""},
		{0, "threads/f1/state", ""},
		{1, "threads/f1/state", `{"values":{"messages":[]},"as_node":"x"}`},
		{1, "threads/f1/history", `{"limit":2}`},
		{1, "threads/f1/runs", `{"assistant_id":"echo_agent","input":{"messages":[]}}`},
		{1, "threads/f1/runs/wait", `{"assistant_id":"echo_agent","input":{"messages":[{"role":"user","content":"x"}]}}`},
		{1, "threads/f1/runs/stream", `{"assistant_id":"echo_agent","input":{},"stream_mode":["values","updates"]}`},
		{0, "threads/f1/runs?status=pending&limit=1", ""},
		{0, "threads/f1/runs/r1", ""},
		{0, "threads/f1/runs/r1/join", ""},
		{1, "threads/f1/runs/r1/cancel", ""},
		{1, "runs/wait", `{"assistant_id":"echo_agent","input":{"messages":[]},"multitask_strategy":"interrupt"}`},
		{1, "runs/stream", `{"assistant_id":"echo_agent","input":{"messages":[]},"webhook":"http://x"}`},
		{1, "assistants/search", `{"graph_id":"echo_agent"}`},
		{1, "assistants/count", `{}`},
		{0, "assistants/echo_agent", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, []byte(s.body), true)
	}
	f.Add(byte(1), "graphs/echo_agent/invoke", []byte(`{"input":{"messages":[{"role":"user","content":"\ud800"}]},"input":1}`), false)
	f.Fuzz(func(t *testing.T, method byte, path string, body []byte, withKey bool) {
		h, err := fuzzApp()
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(path, " \r\n\t") || len(body) > 2<<20 {
			return // not a request line a client can send
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, fuzzMethods[int(method)%len(fuzzMethods)], "http://fuzz/api/"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if withKey {
			req.Header.Set("x-functions-key", fuzzKey)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch code := rec.Code; {
		case code < 500:
		case code == http.StatusNotImplemented:
		case code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "":
		default:
			t.Fatalf("%s /api/%s %q: %d %.500s", req.Method, path, body, code, rec.Body.String())
		}
	})
}
