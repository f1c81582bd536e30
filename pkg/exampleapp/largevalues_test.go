package exampleapp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// do sends one request with the function key and returns status and body.
func do(t *testing.T, tr funchosttest.Transport, method, path, body string) (int, string) {
	t.Helper()
	return doHeaders(t, tr, method, path, body, "x-functions-key", tr.FunctionKey)
}

// doHeaders sends one request with the given header name/value pairs and returns status and
// body.
func doHeaders(t *testing.T, tr funchosttest.Transport, method, path, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// checkLargeThreadValues sends a 400 KB message to echo_agent on a platform thread: the run
// answers 200 and the thread is then idle with the whole conversation as its values, on
// whatever store the app keeps its threads in.
func checkLargeThreadValues(t *testing.T, tr funchosttest.Transport) {
	t.Helper()
	status, body := do(t, tr, "POST", "/api/threads", `{}`)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &th) != nil {
		t.Fatalf("create thread: %d %s", status, body)
	}
	content := strings.Repeat("large message é ", 400_000/16)
	msg, _ := json.Marshal(map[string]any{"assistant_id": "echo_agent", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": content}}}})
	if status, body := do(t, tr, "POST", "/api/threads/"+th.ThreadID+"/runs/wait", string(msg)); status != 200 {
		t.Fatalf("run with a 400 KB message: %d %.300s", status, body)
	}
	for _, path := range []string{"/api/threads/" + th.ThreadID} {
		status, body := do(t, tr, "GET", path, "")
		var got struct {
			Status string `json:"status"`
			Values struct {
				Messages []struct {
					Role, Content string
				} `json:"messages"`
			} `json:"values"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("GET %s: %d %.300s", path, status, body)
		}
		if got.Status != "idle" || len(got.Values.Messages) != 2 || got.Values.Messages[0].Content != content || got.Values.Messages[1].Content != content {
			t.Fatalf("thread after the run: status %q, %d messages; want idle with the message and its echo", got.Status, len(got.Values.Messages))
		}
	}
	status, body = do(t, tr, "POST", "/api/threads/search", `{"limit": 1000}`)
	if status != 200 || !strings.Contains(body, th.ThreadID) || strings.Count(body, "large message") < 2*400_000/16 {
		t.Fatalf("search does not return the thread with its values: %d (%d bytes)", status, len(body))
	}
}

// memoryApp serves the example app in process on the in-memory stores through both
// transports, for the life of the test.
func memoryApp(t *testing.T) []funchosttest.Transport {
	t.Helper()
	return serveApp(t, exampleapp.Config{})
}

// serveApp serves the example app built from cfg (its logs discarded) through both
// transports, for the life of the test.
func serveApp(t *testing.T, cfg exampleapp.Config) []funchosttest.Transport {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	app, err := exampleapp.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	return funchosttest.Transports(t, app.FunctionApp)
}

func TestExampleApp_LargeThreadValues_InMemory(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) { checkLargeThreadValues(t, tr) })
	}
}
