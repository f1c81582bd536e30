package funchost

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchEcho is the work both benchmarks do: read a JSON body and write it back as JSON.
var benchEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
})

const benchBody = `{"input":{"messages":[{"role":"user","content":"hello there, how are you today?"}]},"config":{"configurable":{"thread_id":"t-1"}}}`

// BenchmarkPayloadPath measures the custom-handler JSON protocol: decode the host's invocation,
// rebuild the request, run the handler, capture and encode Outputs.res.
func BenchmarkPayloadPath(b *testing.B) {
	app := NewFunctionApp()
	mustHandle(b, app, HTTPFunction{Name: "echo", Route: "echo", Methods: []string{"POST"}, Handler: benchEcho})
	h := app.CustomHandler(HandlerOptions{})
	payload := payloadPathInvocation()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/echo", bytes.NewReader(payload))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// payloadPathInvocation is the host's invocation of the echo function with benchBody.
func payloadPathInvocation() []byte {
	return []byte(`{"Data":{"req":{"Url":"http://localhost:7071/api/echo","Method":"POST","Query":{},` +
		`"Headers":{"Content-Type":["application/json"],"Accept":["*/*"],"X-Functions-Key":["k"]},"Params":{},` +
		`"Body":` + quoteJSON(benchBody) + `}},"Metadata":{"sys":{"MethodName":"echo","UtcNow":"2026-11-22T03:00:00Z","RandGuid":"x"}}}`)
}

// BenchmarkBareNetHTTP is the peer: the same handler served by plain net/http machinery.
func BenchmarkBareNetHTTP(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/echo", bytes.NewReader([]byte(benchBody)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		benchEcho.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

func quoteJSON(s string) string {
	var buf bytes.Buffer
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			buf.WriteByte('\\')
		}
		buf.WriteRune(r)
	}
	buf.WriteByte('"')
	return buf.String()
}
