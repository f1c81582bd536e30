package mcpserver_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// FuzzServeHTTP: whatever the body, the endpoint answers without panicking and never with a
// server error, and a tasks/* request is answered with a JSON-RPC body of its own.
func FuzzServeHTTP(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/update","params":{"taskId":"x","inputResponses":{"e":{"action":"accept","content":[[[]]]}}}}`,
		`{"jsonrpc":"2.0","method":"tasks/cancel","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`,
		`{"id":null,"method":"tasks/","params":null}`,
		``, `{`, `null`,
	} {
		f.Add(seed)
	}
	r := newRig(f, mcpserver.Options{})
	srv, err := mcpserver.New(mcpserver.Options{Runs: r.eng, Registry: r.eng.Options().Registry, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxInputDepth: 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("body %q: status %d %s", body, rec.Code, rec.Body)
		}
		if strings.Contains(body, `"tasks/`) && strings.HasPrefix(strings.TrimSpace(body), "{") && rec.Code == http.StatusOK &&
			!strings.Contains(rec.Body.String(), `"jsonrpc"`) {
			t.Fatalf("body %q: answer %s", body, rec.Body)
		}
	})
}
