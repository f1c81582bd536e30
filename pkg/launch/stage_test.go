package launch_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
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
	if wantHost, _ := launch.HostJSON("myapp", "api", true); string(host) != string(wantHost) {
		t.Errorf("host.json =\n%s", host)
	}
	f, err := funchosttest.ReadFolder(dir, nil)
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

// writeFile writes content to dir/name.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun_Stage_LocalStartsFromTheRootSettings: the local target takes its settings from the
// local.settings.json of the working directory (the app root): they win over the staged
// folder's, the app's own values win over them (with a warning naming each), settings only
// the staged folder has are kept, and the root file's other members (Host) come along.
func TestRun_Stage_LocalStartsFromTheRootSettings(t *testing.T) {
	self, _ := os.Executable()
	root := t.TempDir()
	t.Chdir(root)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted": false, "Values": {
		"AzureWebJobsStorage": "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1",
		"MY_SETTING": "from the root", "FUNCGRAPH_WORK_QUEUE": "stale-work"}, "Host": {"LocalHttpPort": 7072}}`)
	if err := os.Mkdir("local", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, "local", "local.settings.json", `{"IsEncrypted": false, "Values": {
		"AzureWebJobsStorage": "my-account", "MY_SETTING": "staged", "STAGED_ONLY": "kept"}}`)
	var logs strings.Builder
	err := launch.Run(t.Context(), durableApp(nil), launch.Options{Args: []string{"stage", "--out", "local", "--binary", self},
		Getenv: envOf(nil), Logger: slog.New(slog.NewTextHandler(&logs, nil)), Program: "myapp"})
	if err != nil {
		t.Fatal(err)
	}
	doc, values := readSettings(t, "local")
	want := map[string]string{"FUNCTIONS_WORKER_RUNTIME": "custom", "FUNCGRAPH_WORK_QUEUE": "funcgraph-work", "FUNCGRAPH_STORAGE_PREFIX": "funcgraph",
		"AzureWebJobsStorage": "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1",
		"MY_SETTING":          "from the root", "STAGED_ONLY": "kept"}
	if !reflect.DeepEqual(values, want) {
		t.Errorf("Values = %v,\nwant %v", values, want)
	}
	if host, _ := doc["Host"].(map[string]any); host["LocalHttpPort"] != 7072.0 {
		t.Errorf("Host = %v, want the root file's", doc["Host"])
	}
	if !strings.Contains(logs.String(), `FUNCGRAPH_WORK_QUEUE=\"stale-work\"`) {
		t.Errorf("no warning that the app replaced the root file's work queue:\n%s", logs.String())
	}
}

// TestRun_Stage_RootSettingsEdgeCases: staging into the working directory itself merges into
// its own file; an encrypted root file is refused, naming it; the publish target never reads
// the root file, whose development storage must not reach Azure.
func TestRun_Stage_RootSettingsEdgeCases(t *testing.T) {
	self, _ := os.Executable()
	root := t.TempDir()
	t.Chdir(root)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted": false, "Values": {"MY_SETTING": "x"}}`)
	if err := stage(t, nil, "--out", ".", "--binary", self); err != nil {
		t.Fatal(err)
	}
	if _, values := readSettings(t, root); values["MY_SETTING"] != "x" || values["FUNCGRAPH_WORK_QUEUE"] != "funcgraph-work" {
		t.Errorf("--out .: Values = %v", values)
	}

	writeFile(t, root, "local.settings.json", `{"IsEncrypted": true, "Values": {"A": "b"}}`)
	err := stage(t, nil, "--out", filepath.Join(root, "local"), "--binary", self)
	if err == nil || !strings.Contains(err.Error(), "local.settings.json is encrypted") {
		t.Errorf("an encrypted root file: err = %v, want a refusal naming it", err)
	}

	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		return
	}
	writeFile(t, root, "local.settings.json", `{"IsEncrypted": false, "Values": {"AzureWebJobsStorage": "UseDevelopmentStorage=true", "MY_SETTING": "x"}}`)
	dist := filepath.Join(root, "dist")
	if err := stage(t, nil, "--target", "publish", "--out", dist, "--binary", self); err != nil {
		t.Fatal(err)
	}
	if _, values := readSettings(t, dist); values["MY_SETTING"] != "" || values["AzureWebJobsStorage"] != "" {
		t.Errorf("publish took the root file's settings: %v", values)
	}
}
