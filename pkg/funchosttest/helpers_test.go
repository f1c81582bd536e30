package funchosttest_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// TestMain doubles as a handler executable: with HOSTTEST_HELPER set, the test binary plays
// a custom handler (see helperMain) instead of running tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HOSTTEST_HELPER"); mode != "" {
		helperMain(mode)
		return
	}
	code := m.Run()
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// helperMain is a tiny custom handler process. Modes: "echo" answers every invocation with
// its args, working directory and FUNCTIONS_* environment in the http output; "exit" exits at
// once; "silent" never listens; "late404" listens after 200 ms and answers 404 to `GET /`.
func helperMain(mode string) {
	if timeoutHelperMain(mode) {
		return
	}
	switch mode {
	case "exit":
		os.Exit(3)
	case "silent":
		time.Sleep(time.Hour)
		return
	case "late404":
		time.Sleep(200 * time.Millisecond)
	}
	var probes atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			probes.Add(1)
			if mode == "late404" {
				w.WriteHeader(http.StatusNotFound)
			}
			return
		}
		wd, _ := os.Getwd()
		env := map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "FUNCTIONS_") || strings.HasPrefix(k, "HOSTTEST_") {
				env[k] = v
			}
		}
		info, _ := json.Marshal(map[string]any{"args": os.Args[1:], "cwd": wd, "env": env, "probes": probes.Load(), "path": r.URL.Path})
		writeResult(w, map[string]any{"res": map[string]any{"statusCode": 200, "body": string(info)}})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_ = http.Serve(ln, h)
}

// writeResult answers an invocation with Outputs.
func writeResult(w http.ResponseWriter, outputs map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"Outputs": outputs, "Logs": []string{"handled"}, "ReturnValue": nil})
}

// writeApp creates an app root with host.json and function folders (name → function.json).
func writeApp(t *testing.T, hostJSON string, functions map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if hostJSON == "" {
		hostJSON = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`
	}
	if err := os.WriteFile(filepath.Join(root, "host.json"), []byte(hostJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, fj := range functions {
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "function.json"), []byte(fj), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// httpFunc is a function.json for an http-in/http-out function.
func httpFunc(auth, route string, methods ...string) string {
	b := map[string]any{"type": "httpTrigger", "direction": "in", "name": "req", "authLevel": auth}
	if route != "" {
		b["route"] = route
	}
	if len(methods) > 0 {
		b["methods"] = methods
	}
	data, _ := json.Marshal(map[string]any{"bindings": []any{b, map[string]any{"type": "http", "direction": "out", "name": "res"}}})
	return string(data)
}

// invocation is what the recorder saw.
type invocation struct {
	Method  string
	Path    string
	Query   string
	Header  http.Header
	Body    []byte
	Payload map[string]any
}

// recorder is an in-process handler that records every non-readiness request and answers with
// respond (by default: the invoked function's name as the http output body).
type recorder struct {
	mu      sync.Mutex
	calls   []invocation
	respond func(w http.ResponseWriter, r *http.Request, inv invocation)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		return
	}
	body, _ := io.ReadAll(r.Body)
	inv := invocation{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &inv.Payload)
	rec.mu.Lock()
	rec.calls = append(rec.calls, inv)
	respond := rec.respond
	rec.mu.Unlock()
	if respond != nil {
		respond(w, r, inv)
		return
	}
	writeResult(w, map[string]any{"res": map[string]any{"statusCode": 200, "body": strings.TrimPrefix(r.URL.Path, "/"),
		"headers": map[string]any{"Content-Type": "text/plain"}}})
}

func (rec *recorder) last(t *testing.T) invocation {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) == 0 {
		t.Fatal("the handler received no invocation")
	}
	return rec.calls[len(rec.calls)-1]
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.calls)
}

// start starts an emulator on root with an in-process handler and closes it with the test.
func start(t *testing.T, root string, h http.Handler, opts funchosttest.Options) *funchosttest.Emulator {
	t.Helper()
	opts.AppRoot, opts.Handler = root, h
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	e, err := funchosttest.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// do sends a request and returns status, headers and body.
func do(t *testing.T, method, url string, body io.Reader, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(data)
}

var (
	portRE     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	volatile   = map[string]bool{"UtcNow": true, "RandGuid": true, "Id": true, "PopReceipt": true, "InsertionTime": true, "ExpirationTime": true, "NextVisibleTime": true, "Last": true, "Next": true, "LastUpdated": true}
	maskedText = "<masked>"
)

// mask replaces volatile values (GUIDs, times, ports) so payloads can be compared to goldens.
func mask(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if volatile[k] && val != nil {
				out[k] = maskedText
				continue
			}
			out[k] = mask(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = mask(x[i])
		}
		return out
	case string:
		return portRE.ReplaceAllString(x, "127.0.0.1:PORT")
	}
	return v
}

// checkGolden compares an invocation (path, host headers, masked payload) with
// testdata/<name>.golden.json; -update rewrites it.
func checkGolden(t *testing.T, name string, inv invocation) {
	t.Helper()
	doc := map[string]any{
		"method": inv.Method,
		"path":   inv.Path,
		"headers": map[string]any{
			"Content-Type":                   inv.Header.Get("Content-Type"),
			"User-Agent":                     inv.Header.Get("User-Agent"),
			"X-Azure-Functions-HostVersion":  inv.Header.Get("X-Azure-Functions-HostVersion"),
			"X-Azure-Functions-InvocationId": guidShape(inv.Header.Get("X-Azure-Functions-InvocationId")),
		},
		"payload": mask(inv.Payload),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var guidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func guidShape(s string) string {
	if guidRE.MatchString(s) {
		return "<guid>"
	}
	return "not a guid: " + s
}
