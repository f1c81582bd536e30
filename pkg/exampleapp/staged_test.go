package exampleapp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

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
		Getenv: func(string) string { return "" }, Logger: funchosttest.TestLogger(t),
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
	if problems := funchosttest.CheckPublishFolder(dist, functions); len(problems) > 0 {
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
		if problems := funchosttest.CheckPublishFolder(broken, functions); len(problems) == 0 {
			t.Errorf("without %s the check found nothing", what)
		}
	}
}
