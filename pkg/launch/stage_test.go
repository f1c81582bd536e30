package launch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/hosttest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

func stage(t *testing.T, env map[string]string, args ...string) error {
	t.Helper()
	return launch.Run(t.Context(), durableApp(nil), launch.Options{Args: append([]string{"stage"}, args...), Getenv: envOf(env), Logger: discard(), Program: "myapp"})
}

func readSettings(t *testing.T, dir string) (map[string]any, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "local.settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	var vals struct{ Values map[string]string }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &vals); err != nil {
		t.Fatal(err)
	}
	return doc, vals.Values
}

// TestRun_Stage_LocalFolder: `stage` writes the whole folder `func start` runs, and the host
// reads it: every function indexes (the work queue's binding expression resolves from
// local.settings.json), the executable is in the folder, host.json is the built-in one.
func TestRun_Stage_LocalFolder(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "local")
	if err := stage(t, map[string]string{launch.EnvStoragePrefix: "myagent"}, "--out", dir, "--binary", self); err != nil {
		t.Fatal(err)
	}
	doc, values := readSettings(t, dir)
	want := map[string]string{"FUNCTIONS_WORKER_RUNTIME": "custom", "AzureWebJobsStorage": "UseDevelopmentStorage=true",
		"FUNCGRAPH_WORK_QUEUE": "myagent-work", "FUNCGRAPH_STORAGE_PREFIX": "myagent"}
	if !reflect.DeepEqual(values, want) || doc["IsEncrypted"] != false {
		t.Errorf("local.settings.json = %v, want IsEncrypted false and Values %v", doc, want)
	}
	host, _ := os.ReadFile(filepath.Join(dir, "host.json"))
	if wantHost, _ := launch.HostJSON("myapp", "api"); string(host) != string(wantHost) {
		t.Errorf("host.json =\n%s", host)
	}
	f, err := hosttest.ReadFolder(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.FunctionErrors) != 0 || !slices.Contains(f.Functions, "fg_orchestrator") || !slices.Contains(f.Functions, "fg_repair") {
		t.Errorf("functions %v, errors %v", f.Functions, f.FunctionErrors)
	}
	if f.Executable != filepath.Join(f.Root, "myapp") {
		t.Errorf("executable %q (%v), want the folder's myapp", f.Executable, f.ExecutableErr)
	}
	if st, err := os.Stat(f.Executable); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("executable mode: %v %v", st, err)
	}
}

// TestRun_Stage_KeepsTheUsersSettings: staging again keeps settings the user added and the
// storage the user chose, and puts back what the app needs.
func TestRun_Stage_KeepsTheUsersSettings(t *testing.T) {
	self, _ := os.Executable()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local.settings.json"), []byte(`{"IsEncrypted": false, "Values": {
		"OPENAI_API_KEY": "k", "AzureWebJobsStorage": "my-account", "FUNCGRAPH_WORK_QUEUE": "stale-work"}, "Host": {"LocalHttpPort": 7072}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stage(t, nil, "--out", dir, "--binary", self); err != nil {
		t.Fatal(err)
	}
	doc, values := readSettings(t, dir)
	if values["OPENAI_API_KEY"] != "k" || values["AzureWebJobsStorage"] != "my-account" || values["FUNCGRAPH_WORK_QUEUE"] != "funcgraph-work" || doc["Host"] == nil {
		t.Errorf("local.settings.json = %v", doc)
	}
	if err := os.WriteFile(filepath.Join(dir, "local.settings.json"), []byte(`{"IsEncrypted": true, "Values": {"A": "b"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stage(t, nil, "--out", dir, "--binary", self); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Errorf("an encrypted local.settings.json: err = %v, want a refusal", err)
	}
}

// TestRun_Stage_PublishFolder: the publish target needs a linux/amd64 Go executable in the
// folder, and writes the worker runtime Core Tools reads, without a storage connection.
func TestRun_Stage_PublishFolder(t *testing.T) {
	dir := t.TempDir()
	if err := stage(t, nil, "--target", "publish", "--out", dir); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("no executable: err = %v, want it missing", err)
	}
	script := filepath.Join(t.TempDir(), "app.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := stage(t, nil, "--target", "publish", "--out", dir, "--binary", script); err == nil || !strings.Contains(err.Error(), "not a Go executable") {
		t.Fatalf("a script: err = %v, want a refusal", err)
	}
	self, _ := os.Executable()
	err := stage(t, nil, "--target", "publish", "--out", dir, "--binary", self)
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		if err == nil || !strings.Contains(err.Error(), "needs linux/amd64") {
			t.Fatalf("a %s/%s executable: err = %v, want a refusal", runtime.GOOS, runtime.GOARCH, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	_, values := readSettings(t, dir)
	want := map[string]string{"FUNCTIONS_WORKER_RUNTIME": "custom", "FUNCGRAPH_WORK_QUEUE": "funcgraph-work", "FUNCGRAPH_STORAGE_PREFIX": "funcgraph"}
	if !reflect.DeepEqual(values, want) {
		t.Errorf("Values = %v, want %v", values, want)
	}
	if err := stage(t, nil, "--target", "cloud"); err == nil {
		t.Error("an unknown target was accepted")
	}
}
