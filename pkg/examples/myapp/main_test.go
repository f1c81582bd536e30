package myapp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// main is the listing's entry point, as in the README's main package; here nothing calls it.
var _ = main

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
	_, code, ok := strings.Cut(string(src), "package myapp\n")
	if !ok || !strings.Contains(string(readme), "```go\npackage main\n"+code+"```") {
		t.Fatal("README's \"Your own app\" listing differs from pkg/examples/myapp/main.go")
	}
}

// TestReadme_IsAFrontPage keeps the README a front page: at most 250 lines, with "Your own app"
// within its first 150; everything else belongs in docs/.
func TestReadme_IsAFrontPage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(readme), "\n"), "\n")
	if len(lines) > 250 {
		t.Errorf("README has %d lines, want at most 250: move the detail to docs/", len(lines))
	}
	at := slices.Index(lines, "## Your own app")
	if at < 0 || at >= 150 {
		t.Errorf("README's \"## Your own app\" is at line %d, want within the first 150", at+1)
	}
}

// TestBuild_ServesBothGraphs builds the app through the entrypoint's functions mode.
func TestBuild_ServesBothGraphs(t *testing.T) {
	out := t.TempDir()
	if err := launch.Run(context.Background(), build, launch.Options{Args: []string{"functions", "--out", out}, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"fg_ask_invoke", "start_graph_run"} {
		if _, err := os.Stat(filepath.Join(out, fn, "function.json")); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
}

// TestGreeter_WaitsForApproval drives the durable graph with the test kit.
func TestGreeter_WaitsForApproval(t *testing.T) {
	g, err := greeter()
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	run := kit.Start("g1", Greeting{Name: "ana"})
	if ev, _ := run.WaitingFor(); ev != "approval" {
		t.Fatalf("waiting for %q", ev)
	}
	kit.Send("g1", "approval", Approval{Approved: true})
	if got := kit.Final("g1"); got.Reply != "hello ana (approved)" {
		t.Fatalf("final %+v", got)
	}
}

// TestAsk_ClientError checks the hosted graph refuses an empty question.
func TestAsk_ClientError(t *testing.T) {
	_, err := ask(context.Background(), Question{})
	var ce *host.ClientError
	if !errors.As(err, &ce) || ce.Status != 400 {
		t.Fatalf("ask(empty) = %v", err)
	}
}
