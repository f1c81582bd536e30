package exampleapp

import (
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestBuild_FunctionsFolder_MatchesGenerated fails when the committed functions/ folder differs
// from what the app generates. Fix with `make functions`.
func TestBuild_FunctionsFolder_MatchesGenerated(t *testing.T) {
	app, err := Build(Config{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	diffs, err := app.FunctionApp.DiffFunctions(filepath.Join("..", "..", "functions"))
	if err != nil {
		t.Fatalf("DiffFunctions: %v", err)
	}
	if len(diffs) > 0 {
		t.Fatalf("functions/ drifted from the app (run `make functions`):\n%s", strings.Join(diffs, "\n"))
	}
}

// TestBuild_StartServeClose runs the example app through both transports: hosted echo_agent,
// a durable data_pipeline run to completion, then Close stops the engine.
func TestBuild_StartServeClose(t *testing.T) {
	app, err := Build(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = app.Close()
		}
	})
	for _, tr := range funchosttest.Transports(t, app.FunctionApp) {
		t.Run(tr.Name, func(t *testing.T) {
			do := func(method, path, body string) (int, string) {
				req, _ := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, strings.NewReader(body))
				req.Header.Set("x-functions-key", tr.FunctionKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			code, body := do("POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"`+tr.Name+`"}}}`)
			if code != 200 || body != `{"output":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hi"}]}}` {
				t.Fatalf("invoke: %d %s", code, body)
			}
			id := "example-" + tr.Name
			if code, body := do("POST", "/api/graphs/data_pipeline/runs", `{"instance_id":"`+id+`","input":{"source_url":"https://example.com/data"}}`); code != 202 {
				t.Fatalf("start: %d %s", code, body)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				code, body = do("GET", "/api/runs/"+id, "")
				if strings.Contains(body, `"runtime_status": "Completed"`) {
					break
				}
				if code != 200 || time.Now().After(deadline) {
					t.Fatalf("run did not complete: %d %s", code, body)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(body, `"load_result": "Loaded 3 records to https://example.com/data/output"`) {
				t.Fatalf("final state: %s", body)
			}
		})
	}
	if err := app.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed = true
}
