package durable_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hashLine matches what testdata/hashmod prints.
var hashLine = regexp.MustCompile(`(?m)^graph_hash=([0-9a-f]{16})$`)

// TestDefaultNames_UserModule_SameHashInGoTestAndBinary builds testdata/hashmod, a user's
// module (its own go.mod, requiring funcgraph through a replace to this repository) whose
// graph names its handlers by default, methods in package main: the hash its `go test` prints
// equals the hash its built binary prints (package main is "main" in the binary and the import
// path under go test: a name derived from the Go function would differ).
func TestDefaultNames_UserModule_SameHashInGoTestAndBinary(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hashmod")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "hashmod"))); err != nil {
		t.Fatal(err)
	}
	goMod := "module example.com/hashmod\n\ngo 1.26\n\nrequire github.com/funcgraph/funcgraph v0.0.0\n\n" +
		"replace github.com/funcgraph/funcgraph => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum")) // funcgraph's dependencies, pinned
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// Offline, from the module cache: go.mod and go.sum pin every version.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "build", "-o", "hashmod", ".")
	fromBinary := hashLine.FindStringSubmatch(run("./hashmod"))
	fromTest := hashLine.FindStringSubmatch(run("go", "test", "-count=1", "-v", "-run", "TestPrintHash", "."))
	if fromBinary == nil || fromTest == nil {
		t.Fatalf("no hash line: binary %q, test %q", fromBinary, fromTest)
	}
	if fromBinary[1] != fromTest[1] {
		t.Errorf("graph_hash %s in the binary, %s under go test: want one hash", fromBinary[1], fromTest[1])
	}
}
