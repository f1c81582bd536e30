package exampleapp

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestInfo_NamesTheProtocolsWhereTheyAreServed: GET /api/info needs the key and names runs,
// langgraph, mcp and a2a, and each path and discovery document it names is served (a GET of a
// discovery document answers 200; a protocol's path answers, with the key, anything but 404).
func TestInfo_NamesTheProtocolsWhereTheyAreServed(t *testing.T) {
	app, err := Build(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	tr := funchosttest.Transports(t, app.FunctionApp)[0]
	call := func(method, path, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, strings.NewReader(`{}`))
		if key != "" {
			req.Header.Set("x-functions-key", key)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, _ := call("GET", "/api/info", ""); status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d, want 401", status)
	}
	status, body := call("GET", "/api/info", tr.FunctionKey)
	var info appInfo
	if err := json.Unmarshal([]byte(body), &info); err != nil || status != 200 || info.Name != "funcgraph" || info.Version == "" {
		t.Fatalf("GET /api/info: %d %s", status, body)
	}
	var names []string
	for _, p := range info.Protocols {
		names = append(names, p.Name)
		path := strings.ReplaceAll(p.Path, "{graph_name}", "support_agent")
		method := "POST"
		if p.Name == "runs" {
			method = "GET"
		}
		if s, b := call(method, path, tr.FunctionKey); s == http.StatusNotFound || s == http.StatusMethodNotAllowed {
			t.Errorf("%s: %s %s answers %d %.200s", p.Name, method, path, s, b)
		}
		if p.Discovery != "" {
			d := strings.ReplaceAll(p.Discovery, "{graph_name}", "support_agent")
			if s, b := call("GET", d, tr.FunctionKey); s != 200 {
				t.Errorf("%s: GET %s answers %d %.200s", p.Name, d, s, b)
			}
		}
	}
	if got := strings.Join(names, " "); got != "runs langgraph mcp a2a" {
		t.Fatalf("protocols %s", got)
	}
}
