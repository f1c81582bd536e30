package exampleapp

import (
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
)

// docRoute matches a route as docs/*.md write it: `METHOD /api/path`.
var docRoute = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/api/[^`?\\s]*)[^`]*`")

// TestDocs_DescribeEveryRoute keeps docs/ true to the app: every HTTP route of the example app
// (hosting, durable runs and platform routes) is documented there with its method, path and
// function name (a hosted graph's name written <name>), and every route the docs name exists.
func TestDocs_DescribeEveryRoute(t *testing.T) {
	app, err := Build(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	var docs strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	text := docs.String()
	generic := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "/"+echoagent.Name+"/", "/<name>/"), "_"+echoagent.Name+"_", "_<name>_")
	}
	prefix := "/" + app.FunctionApp.RoutePrefix()
	served := map[string]bool{}
	for _, fn := range app.FunctionApp.HTTPFunctions() {
		for _, m := range fn.Methods {
			route := m + " " + generic(prefix+"/"+fn.Route)
			served[route] = true
			if !strings.Contains(text, "`"+route+"`") {
				t.Errorf("docs/ does not document %s (function %s)", route, fn.Name)
			}
			if name := generic(fn.Name); !strings.Contains(text, "`"+name+"`") {
				t.Errorf("docs/ does not name function %s of %s", name, route)
			}
		}
	}
	for _, m := range docRoute.FindAllStringSubmatch(text, -1) {
		if route := m[1] + " " + m[2]; !served[route] {
			t.Errorf("docs/ documents %s, which the app does not serve", route)
		}
	}
}
