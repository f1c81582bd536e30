package exampleapp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild_FunctionsFolder_MatchesGenerated fails when the committed functions/ folder differs
// from what the app generates. Fix with `make functions`.
func TestBuild_FunctionsFolder_MatchesGenerated(t *testing.T) {
	app, err := Build(Config{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	diffs, err := app.FunctionApp.DiffFunctions(filepath.Join("..", "..", "functions"))
	if err != nil {
		t.Fatalf("DiffFunctions: %v", err)
	}
	if len(diffs) > 0 {
		t.Fatalf("functions/ drifted from the app (run `make functions`):\n%s", strings.Join(diffs, "\n"))
	}
}
