package funchosttest_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// helperInfo is what the helper handler process reports about itself.
type helperInfo struct {
	Args []string          `json:"args"`
	Cwd  string            `json:"cwd"`
	Env  map[string]string `json:"env"`
	Path string            `json:"path"`
}

func helperApp(t *testing.T, host string) string {
	t.Helper()
	root := writeApp(t, host, map[string]string{"fn": httpFunc("anonymous", "fn")})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(root, "handler")); err != nil {
		t.Fatal(err)
	}
	return root
}

func startProcess(t *testing.T, opts funchosttest.Options) (*funchosttest.Emulator, error) {
	t.Helper()
	opts.Logf = t.Logf
	e, err := funchosttest.Start(t.Context(), opts)
	if err == nil {
		t.Cleanup(func() {
			if err := e.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	return e, err
}

func askHelper(t *testing.T, e *funchosttest.Emulator) helperInfo {
	t.Helper()
	status, _, body := do(t, "GET", e.URL()+"/api/fn", nil, nil)
	var info helperInfo
	if status != 200 || json.Unmarshal([]byte(body), &info) != nil {
		t.Fatalf("GET /api/fn = %d %q", status, body)
	}
	return info
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Executable resolution, %VAR% arguments, working directory, environment.
func TestStart_Process_HostJSONDescription(t *testing.T) {
	root := helperApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"handler","workingDirectory":"wd","arguments":["--name","%HOSTTEST_ARG%","%UNSET_SETTING_X%"]}}}`)
	if err := os.Mkdir(filepath.Join(root, "wd"), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := startProcess(t, funchosttest.Options{AppRoot: root, Env: map[string]string{"HOSTTEST_HELPER": "echo", "HOSTTEST_ARG": "expanded"}})
	if err != nil {
		t.Fatal(err)
	}
	info := askHelper(t, e)
	if want := []string{"--name", "expanded", "%UNSET_SETTING_X%"}; !reflect.DeepEqual(info.Args, want) {
		t.Errorf("args = %q, want %q", info.Args, want)
	}
	if got, want := realPath(t, info.Cwd), realPath(t, filepath.Join(root, "wd")); got != want {
		t.Errorf("cwd = %s, want %s", got, want)
	}
	env := info.Env
	if env["FUNCTIONS_CUSTOMHANDLER_PORT"] == "" || env["FUNCTIONS_CUSTOMHANDLER_PORT"] != env["FUNCTIONS_HTTPWORKER_PORT"] {
		t.Errorf("ports: %q / %q", env["FUNCTIONS_CUSTOMHANDLER_PORT"], env["FUNCTIONS_HTTPWORKER_PORT"])
	}
	if guidShape(env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"]) != "<guid>" || env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"] != env["FUNCTIONS_HTTPWORKER_ID"] {
		t.Errorf("worker ids: %q / %q", env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"], env["FUNCTIONS_HTTPWORKER_ID"])
	}
	if realPath(t, env["FUNCTIONS_APP_ROOT_PATH"]) != realPath(t, root) || env["HOSTTEST_ARG"] != "expanded" {
		t.Errorf("FUNCTIONS_APP_ROOT_PATH = %q, HOSTTEST_ARG = %q", env["FUNCTIONS_APP_ROOT_PATH"], env["HOSTTEST_ARG"])
	}
	if info.Path != "/fn" {
		t.Errorf("invocation path = %q, want /fn", info.Path)
	}
}

func TestStart_Process_ExecutableFromPATH(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"funchosttest-helper-on-path"}}}`, map[string]string{"fn": httpFunc("anonymous", "fn")})
	bin := t.TempDir()
	exe, _ := os.Executable()
	if err := os.Symlink(exe, filepath.Join(bin, "funchosttest-helper-on-path")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	e, err := startProcess(t, funchosttest.Options{AppRoot: root, Env: map[string]string{"HOSTTEST_HELPER": "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := realPath(t, askHelper(t, e).Cwd), realPath(t, root); got != want {
		t.Errorf("cwd = %s, want the app root %s", got, want)
	}
}

func TestStart_Process_Readiness(t *testing.T) {
	cases := []struct {
		mode    string
		timeout time.Duration
		wantErr error
	}{
		{"exit", 0, funchosttest.ErrHandlerExited},
		{"silent", 300 * time.Millisecond, funchosttest.ErrNotReady},
		{"late404", 0, nil}, // any answer, even 404, means ready
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			root := helperApp(t, "")
			e, err := startProcess(t, funchosttest.Options{AppRoot: root, InitializationTimeout: tc.timeout, Env: map[string]string{"HOSTTEST_HELPER": tc.mode}})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Start error = %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				askHelper(t, e)
			}
		})
	}
}

// The committed host.json and functions/ folder work with the real handler binary.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func handlerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "funchosttest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "funcgraph")
		cmd := exec.Command("go", "build", "-o", builtBin, "./handler")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build handler: %v", buildErr)
	}
	return builtBin
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStart_RealHandler_CommittedHostJSONAndFunctions runs the real handler from a folder
// laid out like a staged one from the committed host.json and functions/: with the queue
// settings in local.settings.json every function indexes and the app serves; without the work
// queue's the
// host cannot index fg_orchestrator and the app itself refuses to start; with a storage
// prefix that disagrees (set in the environment, which wins over local.settings.json) the
// app refuses to start naming both settings.
func TestStart_RealHandler_CommittedHostJSONAndFunctions(t *testing.T) {
	bin := handlerBinary(t)
	root := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "functions"), root)
	host, err := os.ReadFile(filepath.Join("..", "..", "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "host.json"), host, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := funchosttest.ParseHostConfig(host)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(root, cfg.ExecutablePath)); err != nil {
		t.Fatal(err)
	}

	writeLocalSettings(t, root, `{"IsEncrypted": false, "Values": {"FUNCTIONS_WORKER_RUNTIME": "custom", "FUNCGRAPH_TICKETS_QUEUE": "funcgraph-tickets"}}`)
	logs := newLogWatch(t)
	_, err = funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: root, Logf: logs.logf})
	if !errors.Is(err, funchosttest.ErrHandlerExited) || !logs.contains("app setting FUNCGRAPH_WORK_QUEUE is not set") ||
		!logs.contains("function fg_orchestrator failed to load: error indexing method 'Functions.fg_orchestrator': '%FUNCGRAPH_WORK_QUEUE%' does not resolve to a value") {
		t.Errorf("without FUNCGRAPH_WORK_QUEUE: err = %v, want the handler to refuse to start and fg_orchestrator not to index", err)
	}

	writeLocalSettings(t, root, `{"IsEncrypted": false, "Values": {"FUNCTIONS_WORKER_RUNTIME": "custom", "FUNCGRAPH_WORK_QUEUE": "funcgraph-work", "FUNCGRAPH_TICKETS_QUEUE": "funcgraph-tickets"}}`)
	logs = newLogWatch(t)
	_, err = funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: root, Logf: logs.logf, Env: map[string]string{"FUNCGRAPH_STORAGE_PREFIX": "myagent"}})
	if !errors.Is(err, funchosttest.ErrHandlerExited) || !logs.contains(`FUNCGRAPH_WORK_QUEUE=\"funcgraph-work\"`) || !logs.contains(`FUNCGRAPH_STORAGE_PREFIX=\"myagent\"`) {
		t.Errorf("prefix and queue disagree: err = %v, want the handler to refuse to start naming both settings", err)
	}

	e, err := startProcess(t, funchosttest.Options{AppRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if failed := e.FunctionErrors(); len(failed) != 0 {
		t.Errorf("functions failed to load: %v", failed)
	}
	status, _, body := do(t, "GET", e.URL()+"/"+cfg.RoutePrefix+"/health", nil, nil)
	if status != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("GET /api/health = %d %q, want 200 {\"status\":\"ok\"}", status, body)
	}
	if status, _, _ := do(t, "GET", e.URL()+"/"+cfg.RoutePrefix+"/nothing-here", nil, nil); status != 404 {
		t.Errorf("unknown route = %d, want 404", status)
	}
}

func writeLocalSettings(t *testing.T, root, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "local.settings.json"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
