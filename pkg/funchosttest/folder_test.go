package funchosttest_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// local.settings.json as Core Tools reads it: the environment wins when it sets a non-empty
// value, Values fill in the rest (an empty Value included), numbers and booleans become text,
// null values are skipped.
func TestReadFolder_LocalSettingsUnderTheEnvironment(t *testing.T) {
	root := writeApp(t, "", map[string]string{"fn": httpFunc("anonymous", "fn")})
	writeLocalSettings(t, root, `{"IsEncrypted": false, "Values": {"A": "file", "B": "file", "C": "", "N": 5, "T": true, "Z": null,
		"FUNCTIONS_WORKER_RUNTIME": "custom"}}`)
	f, err := funchosttest.ReadFolder(root, map[string]string{"A": "env", "B": ""})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "env", "B": "file", "C": "", "N": "5", "T": "True", "FUNCTIONS_WORKER_RUNTIME": "custom"}
	if !reflect.DeepEqual(f.Settings, want) {
		t.Errorf("settings = %v, want %v", f.Settings, want)
	}
	if v, ok := f.Setting("functions_worker_runtime"); !ok || v != "custom" || f.WorkerRuntime() != "custom" {
		t.Errorf("setting lookup is not case-insensitive: %q %v", v, ok)
	}
	if f.Executable != "" || f.ExecutableErr == nil {
		t.Errorf("executable %q (%v): want an error, there is no handler file", f.Executable, f.ExecutableErr)
	}
	f, err = funchosttest.ReadFolder(root, map[string]string{"FUNCTIONS_WORKER_RUNTIME": "node"})
	if err != nil || f.WorkerRuntime() != "node" {
		t.Errorf("the environment's FUNCTIONS_WORKER_RUNTIME wins for Core Tools: %q, %v", f.WorkerRuntime(), err)
	}
}

// Core Tools takes a missing IsEncrypted as true and cannot decrypt plain values; a file that
// is not JSON only loses its values.
func TestReadFolder_LocalSettingsCoreToolsCannotRead(t *testing.T) {
	cases := []struct {
		name, content string
		wantErr       error
		wantValues    int
	}{
		{"no IsEncrypted", `{"Values": {"A": "x"}}`, funchosttest.ErrEncryptedSettings, 0},
		{"encrypted", `{"IsEncrypted": true, "Values": {"A": "x"}}`, funchosttest.ErrEncryptedSettings, 0},
		{"encrypted but empty", `{"IsEncrypted": true, "Values": {"A": ""}}`, nil, 1},
		{"not JSON", `{"IsEncrypted": false, "Values": {`, nil, 0},
		{"object value", `{"IsEncrypted": false, "Values": {"A": {"b": 1}, "C": "d"}}`, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeApp(t, "", nil)
			writeLocalSettings(t, root, tc.content)
			f, err := funchosttest.ReadFolder(root, nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && len(f.LocalSettings.Values) != tc.wantValues {
				t.Errorf("values = %v, want %d", f.LocalSettings.Values, tc.wantValues)
			}
		})
	}
}

// Binding expressions are resolved from the app settings when the functions are indexed; a
// function whose expression does not resolve fails to index and the others keep working.
// Only direct subfolders of the app root hold functions.
func TestStart_BindingExpressionsResolvedAtIndexing(t *testing.T) {
	queue := func(name string) string {
		return `{"bindings":[{"name":"msg","type":"queueTrigger","direction":"in","queueName":"` + name + `"}]}`
	}
	root := writeApp(t, "", map[string]string{
		"work":     queue("%WORK_QUEUE%"),
		"prefixed": queue("x-%work_queue%"),
		"missing":  queue("%NOT_SET%"),
		"open":     queue("%WORK_QUEUE"),
		"badname":  queue("a_b"),
		"send": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"send"},
			{"type":"http","direction":"out","name":"res"},{"type":"queue","direction":"out","name":"out","queueName":"%OUT_QUEUE%"}]}`,
		"tick": `{"bindings":[{"name":"t","type":"timerTrigger","direction":"in","schedule":"%SCHEDULE%"}]}`,
	})
	nested := filepath.Join(root, "functions", "nested")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, "function.json"), []byte(httpFunc("anonymous", "nested")), 0o644); err != nil {
		t.Fatal(err)
	}
	writeLocalSettings(t, root, `{"IsEncrypted": false, "Values": {"WORK_QUEUE": "Jobs-One", "OUT_QUEUE": "sent"}}`)
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request, _ invocation) {
		writeResult(w, map[string]any{"res": map[string]any{"statusCode": 200, "body": "ok"}, "out": map[string]any{"from": r.URL.Path}})
	}}
	e := start(t, root, rec, funchosttest.Options{Env: map[string]string{"SCHEDULE": "0 */5 * * * *"}})
	if got, want := e.Functions(), []string{"prefixed", "send", "tick", "work"}; !reflect.DeepEqual(got, want) {
		t.Errorf("functions = %v, want %v (nested folders are not functions)", got, want)
	}
	errs := e.FunctionErrors()
	for name, want := range map[string]string{
		"missing": "error indexing method 'Functions.missing': '%NOT_SET%' does not resolve to a value",
		"open":    "does not have a closing '%'",
		"badname": "a queue name can contain only letters, numbers, and dash(-) characters",
	} {
		if err := errs[name]; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	e.EnqueueBase64("jobs-one", "a")
	e.EnqueueBase64("x-jobs-one", "b")
	if status, _, _ := do(t, "POST", e.URL()+"/api/send", nil, nil); status != 200 {
		t.Fatalf("send = %d", status)
	}
	if got := e.QueueContents("sent"); len(got) != 1 || !strings.Contains(got[0], `"/send"`) {
		t.Errorf("queue output went to %v, want one message in the resolved queue", got)
	}
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	rec.mu.Lock()
	for _, c := range rec.calls {
		paths[c.Path] = true
	}
	rec.mu.Unlock()
	if !paths["/work"] || !paths["/prefixed"] {
		t.Errorf("invocations %v, want /work and /prefixed fed from their resolved queues", paths)
	}
	if err := e.TriggerTimer(t.Context(), "tick"); err != nil {
		t.Errorf("timer with a resolved schedule: %v", err)
	}
}

// The handler's environment is the app settings: local.settings.json Values, with the test's
// environment winning.
func TestStart_Process_LocalSettingsBecomeTheEnvironment(t *testing.T) {
	root := helperApp(t, "")
	writeLocalSettings(t, root, `{"IsEncrypted": false, "Values": {"HOSTTEST_HELPER": "echo", "HOSTTEST_FILE": "file", "HOSTTEST_BOTH": "file"}}`)
	e, err := startProcess(t, funchosttest.Options{AppRoot: root, Env: map[string]string{"HOSTTEST_BOTH": "env"}})
	if err != nil {
		t.Fatal(err)
	}
	env := askHelper(t, e).Env
	if env["HOSTTEST_FILE"] != "file" || env["HOSTTEST_BOTH"] != "env" || env["HOSTTEST_HELPER"] != "echo" {
		t.Errorf("handler environment %v: want HOSTTEST_FILE=file, HOSTTEST_BOTH=env, HOSTTEST_HELPER=echo", env)
	}
}

// host.json's visibilityTimeout hides a failed message before its retry, in memory too.
func TestEmulator_InMemoryQueue_VisibilityTimeout(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"handler"}},"extensions":{"queues":{"visibilityTimeout":"00:00:30"}}}`,
		map[string]string{"worker": queueFunc})
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) {
		w.WriteHeader(http.StatusInternalServerError)
	}}
	e := start(t, root, rec, funchosttest.Options{})
	e.EnqueueBase64("work-items", "x")
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 1 || len(e.Queue("work-items")) != 1 {
		t.Errorf("invocations %d, queue %v: want one delivery and the message hidden for its retry", rec.count(), e.Queue("work-items"))
	}
}
