package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestReadmeShowsThisApp keeps the README's "Your own app" listing and this file identical.
func TestReadmeShowsThisApp(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(src), "package main\n")
	if !ok || !strings.Contains(string(readme), "```go\npackage main\n"+code+"```") {
		t.Fatal("README's \"Your own app\" listing differs from pkg/examples/myapp/main.go")
	}
}

// TestBuild_ServesBothGraphs builds the app through the entrypoint's functions mode.
func TestBuild_ServesBothGraphs(t *testing.T) {
	out := t.TempDir()
	if err := launch.Run(context.Background(), build, launch.Options{Args: []string{"functions", "--out", out}, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"fg_echo_invoke", "start_graph_run"} {
		if _, err := os.Stat(filepath.Join(out, fn, "function.json")); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
}
