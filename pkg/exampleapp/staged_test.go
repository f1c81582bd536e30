package exampleapp_test

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// checkPublishFolder reads dir as `func azure functionapp publish` and then the host in Azure
// read it, and lists what would stop them: Core Tools needs FUNCTIONS_WORKER_RUNTIME=custom
// (from local.settings.json, which it never uploads); the host needs host.json, every function
// folder at the root indexing (with the settings local.settings.json lists), and the
// executable named by defaultExecutablePath in the folder itself (nothing else is on PATH in
// Azure), built for linux/amd64.
func checkPublishFolder(dir string, functions []string) []string {
	f, err := hosttest.ReadFolder(dir, nil)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if f.WorkerRuntime() != "custom" {
		problems = append(problems, fmt.Sprintf("FUNCTIONS_WORKER_RUNTIME is %q, want custom: Core Tools stops before uploading", f.WorkerRuntime()))
	}
	if _, ok := f.LocalSettings.Values["AzureWebJobsStorage"]; ok {
		problems = append(problems, "local.settings.json names a storage account: --publish-local-settings would upload it")
	}
	for _, fn := range functions {
		if !slices.Contains(f.Functions, fn) {
			problems = append(problems, fmt.Sprintf("function %s does not index: %v", fn, f.FunctionErrors[fn]))
		}
	}
	for fn, err := range f.FunctionErrors {
		problems = append(problems, fmt.Sprintf("function %s: %v", fn, err))
	}
	if f.Executable != filepath.Join(f.Root, f.Config.ExecutablePath) {
		return append(problems, fmt.Sprintf("defaultExecutablePath %q is not in the folder (%v)", f.Config.ExecutablePath, f.ExecutableErr))
	}
	info, err := buildinfo.ReadFile(f.Executable)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: %v", f.Executable, err))
	}
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "linux" || goarch != "amd64" {
		problems = append(problems, fmt.Sprintf("%s is built for %s/%s, want linux/amd64", f.Executable, goos, goarch))
	}
	return problems
}

// TestStage_PublishFolder_AsCoreToolsAndTheHostReadIt stages dist/ as `make package` does
// (a linux/amd64 build into the folder, then `stage --target publish`) and reads it as Core
// Tools and the host would; then it removes, one at a time, a function folder, the executable
// and the worker runtime, and expects each to be reported.
func TestStage_PublishFolder_AsCoreToolsAndTheHostReadIt(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	build := exec.Command("go", "build", "-o", filepath.Join(dist, "funcgraph"), "./handler")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	err := launch.Run(t.Context(), exampleapp.Launch, launch.Options{
		Args:   []string{"stage", "--target", "publish", "--out", dist, "--exe", "funcgraph"},
		Getenv: func(string) string { return "" }, Logger: hosttest.TestLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	app, err := exampleapp.Build(exampleapp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var functions []string
	for name := range app.FunctionApp.FunctionJSONs() {
		functions = append(functions, name)
	}
	if problems := checkPublishFolder(dist, functions); len(problems) > 0 {
		t.Fatalf("dist/ would not deploy:\n%v", problems)
	}

	breakages := map[string]func(dir string) error{
		"a function folder": func(dir string) error { return os.RemoveAll(filepath.Join(dir, "fg_orchestrator")) },
		"the executable":    func(dir string) error { return os.Remove(filepath.Join(dir, "funcgraph")) },
		"the runtime": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "local.settings.json"), []byte(`{"IsEncrypted": false, "Values": {"FUNCGRAPH_WORK_QUEUE": "funcgraph-work"}}`), 0o644)
		},
	}
	for what, breakIt := range breakages {
		broken := filepath.Join(t.TempDir(), "dist")
		if err := os.CopyFS(broken, os.DirFS(dist)); err != nil {
			t.Fatal(err)
		}
		if err := breakIt(broken); err != nil {
			t.Fatal(err)
		}
		if problems := checkPublishFolder(broken, functions); len(problems) == 0 {
			t.Errorf("without %s the check found nothing", what)
		}
	}
}
