package launch_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// call sends a JSON request with the function key (none when key is "") and returns the
// status and body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	if key != "" {
		req.Header.Set("x-functions-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// greeter is the tiny app's only graph: it answers {"greeting": "hello <name>"}.
type greeter struct{}

func (greeter) Invoke(_ context.Context, req host.Request) (any, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, err
	}
	return map[string]any{"greeting": "hello " + in.Name}, nil
}

// tinyApp is a second app, unrelated to the example app, built through the entrypoint.
func tinyApp(started *bool, closed *int) launch.Builder {
	return func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock})
		if err != nil {
			return nil, err
		}
		if err := h.Register(greeter{}, "greeter", host.RegisterOptions{}); err != nil {
			return nil, err
		}
		return &launch.App{
			FunctionApp: h.FunctionApp(),
			Start:       func(context.Context) error { *started = true; return nil },
			Close:       func() error { *closed++; return nil },
		}, nil
	}
}

func TestRun_TinyApp_FunctionsMode(t *testing.T) {
	var started bool
	var closed int
	out := t.TempDir()
	err := launch.Run(t.Context(), tinyApp(&started, &closed), launch.Options{Args: []string{"functions", "--out", out}, Getenv: envOf(nil), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"fg_greeter_invoke", "fg_health"} {
		if _, err := os.Stat(filepath.Join(out, fn, "function.json")); err != nil {
			t.Errorf("%s not written: %v", fn, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "fg_echo_agent_invoke")); err == nil {
		t.Error("the example app's echo_agent leaked into the tiny app's functions")
	}
	if started || closed != 1 {
		t.Errorf("functions mode: started=%v closed=%d, want no start and one close", started, closed)
	}
}

func TestRun_UnknownOrMissingSubcommand(t *testing.T) {
	var started bool
	var closed int
	for _, args := range [][]string{nil, {"bogus"}} {
		err := launch.Run(t.Context(), tinyApp(&started, &closed), launch.Options{Args: args, Getenv: envOf(nil), Logger: discard(), Program: "tiny"})
		if err == nil || !strings.Contains(err.Error(), "usage: tiny serve") {
			t.Errorf("args %q: err = %v, want the usage", args, err)
		}
	}
}

// TestRun_TinyApp_ServeMode serves the tiny app on a free port, invokes its graph with the
// function key, then cancels the context (as SIGTERM does) and expects a clean stop.
func TestRun_TinyApp_ServeMode(t *testing.T) {
	var started bool
	var closed int
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	opts := launch.Options{
		Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: envOf(map[string]string{"FUNCGRAPH_FUNCTION_KEY": "k1"}),
		Logger: discard(), OnListen: func(a net.Addr) { addrc <- a.String() },
	}
	go func() { done <- launch.Run(ctx, tinyApp(&started, &closed), opts) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("Run returned before listening: %v", err)
	}
	post := func(key string) (int, string) {
		return call(t, http.MethodPost, "http://"+addr+"/api/graphs/greeter/invoke", key, `{"input":{"name":"ada"}}`)
	}
	if code, _ := post(""); code != http.StatusUnauthorized {
		t.Errorf("invoke without key = %d, want 401", code)
	}
	if code, body := post("k1"); code != http.StatusOK || !strings.Contains(body, `hello ada`) {
		t.Errorf("invoke = %d %s, want 200 with the greeting", code, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
	if !started || closed != 1 {
		t.Errorf("serve mode: started=%v closed=%d, want started and closed once", started, closed)
	}
}

func TestFromEnv_LockBackend(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr error
	}{
		{name: "unset"},
		{name: "inprocess", env: map[string]string{"GRAPH_LOCK_BACKEND": " InProcess "}},
		{name: "distributed without storage", env: map[string]string{"GRAPH_LOCK_BACKEND": "distributed"}, wantErr: launch.ErrDistributedNeedsStorage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := launch.FromEnv(t.Context(), envOf(tc.env), launch.ModeServe, discard())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && s.ThreadLock != nil {
				t.Fatalf("ThreadLock = %T, want nil (in-process)", s.ThreadLock)
			}
		})
	}
}

// TestRun_LockBackendMismatch_FailsFast: a backend the app cannot honour stops serve before
// it listens, with the hosting app's message.
func TestRun_LockBackendMismatch_FailsFast(t *testing.T) {
	var started bool
	var closed int
	err := launch.Run(t.Context(), tinyApp(&started, &closed), launch.Options{
		Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: envOf(map[string]string{"GRAPH_LOCK_BACKEND": " Redis "}), Logger: discard(),
	})
	if !errors.Is(err, host.ErrLockBackendMismatch) || !strings.Contains(err.Error(), "GRAPH_LOCK_BACKEND='redis' requires a distributed thread_lock backend") {
		t.Fatalf("err = %v, want ErrLockBackendMismatch", err)
	}
	if started {
		t.Error("app started despite the mismatch")
	}
}

func TestLoadKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(file, []byte(`{"masterKey":{"name":"master","value":"from-file"},"functionKeys":[{"name":"ci","value":"fk"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := launch.LoadKeys(envOf(map[string]string{"FUNCGRAPH_KEYS_FILE": file, "FUNCGRAPH_FUNCTION_KEY": "env-fk", "FUNCGRAPH_MASTER_KEY": "env-master"}))
	if err != nil {
		t.Fatal(err)
	}
	if keys.Master != "env-master" || keys.HostFunction["ci"] != "fk" || keys.HostFunction["default"] != "env-fk" {
		t.Fatalf("keys = %+v", keys)
	}
	if _, err := launch.LoadKeys(envOf(map[string]string{"FUNCGRAPH_KEYS_FILE": filepath.Join(t.TempDir(), "missing.json")})); err == nil {
		t.Fatal("missing keys file: want an error")
	}
}
