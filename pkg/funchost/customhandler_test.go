package funchost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
)

// echoRequest is a handler that reports what it received.
var echoRequest = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Add("X-Seen", "1")
	w.Header().Add("X-Seen", "2")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "multi": r.Header.Values("X-Multi"),
		"body": string(body), "id": r.PathValue("id"), "invocation": InvocationID(r.Context()),
		"contentLength": r.ContentLength, "identities": invocationIdentities(r.Context()) != nil,
	})
})

func testApp(t *testing.T) *FunctionApp {
	t.Helper()
	app := NewFunctionApp()
	mustHandle(t, app, HTTPFunction{Name: "fg_echo_invoke", Route: "graphs/echo/invoke", Methods: []string{"POST"}, Handler: echoRequest})
	mustHandle(t, app, HTTPFunction{Name: "items", Route: "items/{id?}", Handler: echoRequest})
	mustHandle(t, app, HTTPFunction{Name: "panics", Route: "panics", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Partial", "yes")
		_, _ = w.Write([]byte("partial"))
		panic("secret internal detail")
	})})
	mustHandle(t, app, HTTPFunction{Name: "plain", Route: "plain", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html><body>hi</body></html>"))
	})})
	if err := app.HandleQueue(QueueFunction{Name: "work", QueueName: "work-items",
		Outputs: []OutputBinding{{Name: "out", Type: "queue", QueueName: "next"}},
		Handler: func(ctx context.Context, msg QueueMessage) (Outputs, error) {
			if string(msg.Body) == "fail" {
				return nil, errors.New("secret failure text")
			}
			return Outputs{"out": map[string]any{"got": string(msg.Body), "dequeue": msg.DequeueCount}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if err := app.HandleTimer(TimerFunction{Name: "sweep", Schedule: "0 */5 * * * *",
		Handler: func(ctx context.Context, info TimerInfo) (Outputs, error) {
			if info.ScheduleStatus == nil {
				return nil, errors.New("no status")
			}
			return nil, nil
		}}); err != nil {
		t.Fatal(err)
	}
	return app
}

func invokeRaw(t *testing.T, h http.Handler, function string, payload []byte) (*httptest.ResponseRecorder, map[string]json.RawMessage) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/"+function, bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", "inv-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusNotFound && ct != "application/json" {
		t.Fatalf("reply Content-Type = %q, want application/json", ct)
	}
	var env map[string]json.RawMessage
	_ = json.Unmarshal(rec.Body.Bytes(), &env)
	return rec, env
}

// wireHTTPOutput is the value of an http output binding as tests read it (`Outputs.<res>`).
type wireHTTPOutput struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

func httpOutput(t *testing.T, env map[string]json.RawMessage) wireHTTPOutput {
	t.Helper()
	var outs map[string]json.RawMessage
	if err := json.Unmarshal(env["Outputs"], &outs); err != nil {
		t.Fatalf("Outputs: %v", err)
	}
	var res wireHTTPOutput
	if err := json.Unmarshal(outs["res"], &res); err != nil {
		t.Fatalf("Outputs.res: %v", err)
	}
	return res
}

func TestCustomHandler_Readiness(t *testing.T) {
	rec := httptest.NewRecorder()
	testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", rec.Code)
	}
}

func TestCustomHandler_HTTPInvocation_Golden(t *testing.T) {
	payload, err := os.ReadFile(filepath.Join("testdata", "invocations", "http_post_json.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec, env := invokeRaw(t, testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)}), "fg_echo_invoke", payload)
	if rec.Code != http.StatusOK {
		t.Fatalf("reply status = %d, want 200", rec.Code)
	}
	if string(env["ReturnValue"]) != "null" || string(env["Logs"]) != "[]" {
		t.Errorf("envelope = %s", rec.Body.String())
	}
	res := httpOutput(t, env)
	if res.StatusCode != http.StatusCreated {
		t.Errorf("statusCode = %d, want 201", res.StatusCode)
	}
	if res.Headers["Content-Type"] != "application/json" || res.Headers["X-Seen"] != "1, 2" {
		t.Errorf("headers = %v", res.Headers)
	}
	var seen map[string]any
	if err := json.Unmarshal([]byte(res.Body), &seen); err != nil {
		t.Fatalf("body is a string holding JSON: %v (%q)", err, res.Body)
	}
	want := map[string]any{"method": "POST", "path": "/api/graphs/echo/invoke", "query": "code=abc&x=1",
		"body": `{"input":{"a":1}}`, "invocation": "inv-1", "contentLength": float64(17), "identities": true}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("handler saw %s = %v, want %v", k, seen[k], v)
		}
	}
	if multi, _ := json.Marshal(seen["multi"]); string(multi) != `["a","b"]` {
		t.Errorf("multi header = %s", multi)
	}
}

func TestCustomHandler_PathValues(t *testing.T) {
	h := testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)})
	tests := []struct{ name, trigger, wantID string }{
		{"from Params", `{"Url":"http://h/api/items/zzz","Method":"GET","Params":{"id":"p1"}}`, "p1"},
		{"null optional", `{"Url":"http://h/api/items","Method":"GET","Params":{"id":null}}`, ""},
		{"matched from Url without Params", `{"Url":"http://h/api/items/u%2F1","Method":"GET"}`, "u/1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, env := invokeRaw(t, h, "items", []byte(`{"Data":{"req":`+tc.trigger+`},"Metadata":{}}`))
			var seen map[string]any
			_ = json.Unmarshal([]byte(httpOutput(t, env).Body), &seen)
			if seen["id"] != tc.wantID {
				t.Fatalf("id = %v, want %q", seen["id"], tc.wantID)
			}
		})
	}
}

func TestCustomHandler_InvocationFailures(t *testing.T) {
	h := testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)})
	tests := []struct {
		name, function, payload string
		status                  int
	}{
		{"not json", "items", `{"Data":`, http.StatusBadRequest},
		{"missing trigger", "items", `{"Data":{},"Metadata":{}}`, http.StatusBadRequest},
		{"bad trigger", "items", `{"Data":{"req":{"Url":"http://h/"}}}`, http.StatusBadRequest},
		{"queue handler error", "work", `{"Data":{"msg":"\"fail\""},"Metadata":{}}`, http.StatusInternalServerError},
		{"timer handler error", "sweep", `{"Data":{"timer":{"Schedule":{},"ScheduleStatus":null,"IsPastDue":false}}}`, http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := invokeRaw(t, h, tc.function, []byte(tc.payload))
			if rec.Code != tc.status {
				t.Fatalf("reply status = %d, want %d", rec.Code, tc.status)
			}
			if strings.Contains(rec.Body.String(), "secret") {
				t.Fatalf("reply leaks error text: %s", rec.Body.String())
			}
		})
	}
}

func TestCustomHandler_PanicBecomes500Output(t *testing.T) {
	_, env := invokeRaw(t, testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)}), "panics", []byte(`{"Data":{"req":{"Url":"http://h/api/panics","Method":"GET"}}}`))
	res := httpOutput(t, env)
	if res.StatusCode != http.StatusInternalServerError || res.Body != "" || res.Headers["X-Partial"] != "" {
		t.Fatalf("res = %+v, want a clean 500", res)
	}
}

func TestCustomHandler_SniffsContentType(t *testing.T) {
	_, env := invokeRaw(t, testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)}), "plain", []byte(`{"Data":{"req":{"Url":"http://h/api/plain","Method":"GET"}}}`))
	if ct := httpOutput(t, env).Headers["Content-Type"]; !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type = %q, want sniffed text/html", ct)
	}
}

func TestCustomHandler_QueueAndTimer(t *testing.T) {
	h := testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)})
	payload, _ := os.ReadFile(filepath.Join("testdata", "invocations", "queue_double_encoded.json"))
	rec, env := invokeRaw(t, h, "WORK", payload) // function names are case-insensitive
	if rec.Code != http.StatusOK {
		t.Fatalf("queue reply = %d", rec.Code)
	}
	if got := string(env["Outputs"]); got != `{"out":{"dequeue":2,"got":"hello"}}` {
		t.Fatalf("Outputs = %s", got)
	}
	payload, _ = os.ReadFile(filepath.Join("testdata", "invocations", "timer.json"))
	if rec, _ := invokeRaw(t, h, "sweep", payload); rec.Code != http.StatusOK {
		t.Fatalf("timer reply = %d", rec.Code)
	}
}

func TestCustomHandler_ForwardedRequest(t *testing.T) {
	h := testApp(t).CustomHandler(HandlerOptions{Logger: testLogger(t)})
	tests := []struct {
		method, target string
		status         int
		id             string
	}{
		{http.MethodPost, "/api/graphs/echo/invoke?code=k", http.StatusCreated, ""},
		{http.MethodGet, "/API/items/42", http.StatusCreated, "42"},
		{http.MethodGet, "/api/graphs/echo/invoke", http.StatusNotFound, ""}, // method mismatch falls through
		{http.MethodGet, "/other/items", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, strings.NewReader("x")))
		if rec.Code != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.target, rec.Code, tc.status)
			continue
		}
		if tc.status == http.StatusNotFound {
			if rec.Body.Len() != 0 {
				t.Errorf("%s %s: 404 body %q, want empty", tc.method, tc.target, rec.Body.String())
			}
			continue
		}
		var seen map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &seen)
		if seen["id"] != tc.id {
			t.Errorf("%s %s: id = %v, want %q", tc.method, tc.target, seen["id"], tc.id)
		}
	}
}

// TestCustomHandler_ReplyEarly: a handler that answers with waitbound.ReplyEarly gets its
// reply to the host at once, complete, while it still runs, on a connection the host is told
// not to reuse; nothing more is written when it returns.
func TestCustomHandler_ReplyEarly(t *testing.T) {
	t.Parallel()
	payload, err := os.ReadFile(filepath.Join("testdata", "invocations", "http_post_json.json"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	app := NewFunctionApp()
	mustHandle(t, app, HTTPFunction{Name: "fg_echo_invoke", Route: "graphs/echo/invoke", Methods: []string{"POST"},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !waitbound.CanReplyEarly(w) {
				t.Error("the capture of an HTTP invocation cannot reply early")
				return
			}
			waitbound.ReplyEarly(w, http.StatusGatewayTimeout, http.Header{"Content-Type": {"application/json"}}, []byte(`{"late":true}`))
			if r.Header.Get("X-Wait") != "" {
				<-release
			}
		})})
	h := app.CustomHandler(HandlerOptions{Logger: testLogger(t)})

	rec, env := invokeRaw(t, h, "fg_echo_invoke", payload) // returns at once: one reply, not two
	if res := httpOutput(t, env); rec.Code != http.StatusOK || res.StatusCode != http.StatusGatewayTimeout || res.Body != `{"late":true}` {
		t.Fatalf("reply %d %s, want 200 with the 504 output", rec.Code, rec.Body.String())
	}
	if n := bytes.Count(rec.Body.Bytes(), []byte(`"Outputs"`)); n != 1 {
		t.Fatalf("%d replies written, want 1: %s", n, rec.Body.String())
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handler
	waiting := bytes.Replace(payload, []byte(`"Headers": {`), []byte(`"Headers": {"X-Wait": ["1"],`), 1)
	if bytes.Equal(waiting, payload) {
		t.Fatal("test payload has no Headers object")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/fg_echo_invoke", bytes.NewReader(waiting))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the reply while the handler runs: %v", err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(body, &got); err != nil || httpOutput(t, got).StatusCode != http.StatusGatewayTimeout || !resp.Close {
		t.Fatalf("reply %q (%v), close %v; want the 504 output and the connection closed", body, err, resp.Close)
	}
}
