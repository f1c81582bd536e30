package funchosttest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// timeoutHelperMain is the handler process of the functionTimeout tests (HOSTTEST_HELPER=
// timeouts): /pid answers its process id, /hang and /hang2 never answer, /work (a queue
// function) never answers the first delivery of a message and writes {"count": DequeueCount}
// to its "done" output on later ones.
func timeoutHelperMain(mode string) bool {
	if mode != "timeouts" {
		return false
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			return
		}
		var p struct{ Metadata map[string]any }
		_ = json.NewDecoder(r.Body).Decode(&p)
		switch r.URL.Path {
		case "/pid":
			writeResult(w, map[string]any{"res": map[string]any{"statusCode": 200, "body": strconv.Itoa(os.Getpid())}})
		case "/work":
			if p.Metadata["DequeueCount"] == "1" {
				select {}
			}
			writeResult(w, map[string]any{"done": map[string]any{"count": p.Metadata["DequeueCount"]}})
		default:
			select {}
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_ = http.Serve(ln, h)
	return true
}

// timeoutApp is an app root whose handler is this test binary in "timeouts" mode.
func timeoutApp(t *testing.T, hostJSON string, functions map[string]string) string {
	t.Helper()
	root := writeApp(t, hostJSON, functions)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(root, "handler")); err != nil {
		t.Fatal(err)
	}
	return root
}

// logWatch passes log lines to t.Logf and remembers them.
type logWatch struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
	seen  map[string]chan struct{}
}

func newLogWatch(t *testing.T, patterns ...string) *logWatch {
	w := &logWatch{t: t, seen: map[string]chan struct{}{}}
	for _, p := range patterns {
		w.seen[p] = make(chan struct{})
	}
	return w
}

func (w *logWatch) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	w.t.Log(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
	for p, ch := range w.seen {
		if strings.Contains(line, p) {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	}
}

func (w *logWatch) contains(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// An invocation that outlives functionTimeout fails (500 with an empty
// body, as the host's ExceptionMiddleware answers), the handler process is killed and a new
// one started on a new port, and an invocation that was in flight in the old process dies
// with it although its own limit had not passed.
func TestEmulator_FunctionTimeout_KillsAndRestartsHandlerProcess(t *testing.T) {
	root := timeoutApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"handler"}},"functionTimeout":"00:00:02"}`,
		map[string]string{"pid": httpFunc("anonymous", "pid"), "hang": httpFunc("anonymous", "hang"), "hang2": httpFunc("anonymous", "hang2")})
	logs := newLogWatch(t, "Timeout value of 00:00:02 was exceeded by function: Functions.hang")
	e, err := funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: root, Env: map[string]string{"HOSTTEST_HELPER": "timeouts"}, Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	pid := func() int {
		status, _, body := do(t, "GET", e.URL()+"/api/pid", nil, nil)
		n, err := strconv.Atoi(body)
		if status != 200 || err != nil {
			t.Fatalf("GET /api/pid = %d %q", status, body)
		}
		return n
	}
	before := pid()

	type answer struct {
		status int
		body   string
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	go func() {
		status, _, body := do(t, "GET", e.URL()+"/api/hang", nil, nil)
		first <- answer{status, body}
	}()
	select {
	case <-logs.seen["Timeout value of 00:00:02 was exceeded by function: Functions.hang"]:
	case <-time.After(30 * time.Second):
		t.Fatal("no timeout was logged for /api/hang")
	}
	// One second into the grace period, so the kill (one second later) comes a second before
	// hang2's own limit.
	time.Sleep(time.Second)
	go func() {
		status, _, body := do(t, "GET", e.URL()+"/api/hang2", nil, nil)
		second <- answer{status, body}
	}()
	for name, ch := range map[string]chan answer{"hang": first, "hang2": second} {
		if a := <-ch; a.status != http.StatusInternalServerError || a.body != "" {
			t.Errorf("%s answered %d %q, want 500 with an empty body", name, a.status, a.body)
		}
	}
	if logs.contains("exceeded by function: Functions.hang2") {
		t.Error("hang2 timed out itself; want it killed with the process before its own limit")
	}
	if e.Restarts() != 1 {
		t.Errorf("Restarts() = %d, want 1", e.Restarts())
	}
	if err := syscall.Kill(before, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("old handler process %d: signal 0 gave %v, want ESRCH (killed)", before, err)
	}
	if after := pid(); after == before {
		t.Errorf("handler pid %d after the restart, want a new process", after)
	}
}

// The host waits timeoutGracePeriod after the limit: an invocation that ends within it has
// still failed, but the handler is not restarted; one that does not end is killed with the
// handler (an in-process handler's server and connections are closed). Timer invocations are
// covered like any other.
func TestEmulator_FunctionTimeout_GracePeriodThenRestart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		sleep        time.Duration // 0: until the test ends
		wantRestarts int
	}{
		{"ends within the grace period", 2 * time.Second, 0},
		{"outlives the grace period", 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					return
				}
				if tc.sleep > 0 {
					time.Sleep(tc.sleep)
				} else {
					<-release
				}
				writeResult(w, nil)
			})
			root := writeApp(t, "", map[string]string{"tick": `{"bindings":[{"name":"t","type":"timerTrigger","direction":"in","schedule":"0 * * * * *"}]}`})
			e := start(t, root, h, funchosttest.Options{FunctionTimeout: time.Second})
			err := e.TriggerTimer(t.Context(), "tick")
			if !errors.Is(err, funchosttest.ErrFunctionTimeout) || !errors.Is(err, funchosttest.ErrInvocationFailed) {
				t.Fatalf("TriggerTimer error = %v, want ErrFunctionTimeout and ErrInvocationFailed", err)
			}
			if e.Restarts() != tc.wantRestarts {
				t.Errorf("Restarts() = %d, want %d", e.Restarts(), tc.wantRestarts)
			}
		})
	}
}

func TestStart_FunctionTimeout_Defaults(t *testing.T) {
	cases := []struct {
		json string
		want time.Duration
	}{
		{`{}`, funchosttest.DefaultFunctionTimeout},
		{`{"functionTimeout":"00:00:02"}`, 2 * time.Second},
		{`{"functionTimeout":"-1"}`, 0},
	}
	for _, tc := range cases {
		cfg, err := funchosttest.ParseHostConfig([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.EffectiveFunctionTimeout(); got != tc.want {
			t.Errorf("%s: EffectiveFunctionTimeout() = %v, want %v", tc.json, got, tc.want)
		}
	}
	if _, err := funchosttest.ParseHostConfig([]byte(`{"functionTimeout":"00:00:00.5"}`)); err == nil {
		t.Error("functionTimeout 0.5 s accepted, want the host's 1 s minimum error")
	}
}

// The caller's disconnect does not cancel the invocation.
func TestEmulator_CallerDisconnect_DoesNotCancelInvocation(t *testing.T) {
	finished := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // so the server watches the connection
		time.Sleep(500 * time.Millisecond) // the caller gave up after 100 ms
		finished <- r.Context().Err()
		writeResult(w, nil)
	})
	e := start(t, writeApp(t, "", map[string]string{"fn": httpFunc("anonymous", "fn")}), h, funchosttest.Options{})
	client := &http.Client{Timeout: 100 * time.Millisecond}
	if resp, err := client.Get(e.URL() + "/api/fn"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("the request did not time out on the client side")
	}
	if err := <-finished; err != nil {
		t.Errorf("handler's request context: %v, want it alive after the caller left", err)
	}
}
