package myapp

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutPage is the page whose "## Layout" table maps the packages.
const layoutPage = "docs/architecture.md"

// TestDocs_LayoutMatchesTree keeps the layout table of docs/architecture.md true: every Go
// package under pkg/ is named there by its path, and every pkg/ path it names exists.
func TestDocs_LayoutMatchesTree(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(layoutPage)))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(page), "\n## Layout\n")
	if !ok {
		t.Fatalf("%s has no \"## Layout\" section", layoutPage)
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(pkg/[a-z0-9/]+?)/?`").FindAllStringSubmatch(layout, -1) {
		named[m[1]] = true
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range pkgs {
		if !named[p] {
			t.Errorf("%s: the layout does not name package %s", layoutPage, p)
		}
	}
	for p := range named {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: the layout names %s, which does not exist", layoutPage, p)
		}
	}
}

// TestLayout_NoCommandUnderPkg: every package under pkg/ is a library; the binaries' main
// packages live in handler/ (and in test fixtures under testdata/, which go tools ignore).
func TestLayout_NoCommandUnderPkg(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?m)^package main$`).Match(src) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s is in package main: pkg/ holds libraries only", filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
