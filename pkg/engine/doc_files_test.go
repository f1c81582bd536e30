package engine_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDoc_ReadingOrderListsEveryFile keeps doc.go's reading order true: every non-test Go file
// of the package is listed there once, and every file listed exists.
func TestDoc_ReadingOrderListsEveryFile(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z0-9_]+\.go)\s`).FindAllStringSubmatch(string(src), -1) {
		listed[m[1]]++
	}
	if len(listed) == 0 {
		t.Fatal("doc.go lists no files")
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		if listed[f] == 0 {
			missing = append(missing, f)
		}
	}
	for f, n := range listed {
		switch {
		case !slices.Contains(files, f):
			t.Errorf("doc.go lists %s, which is not in the package", f)
		case n > 1:
			t.Errorf("doc.go lists %s %d times", f, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("doc.go's reading order omits %s", strings.Join(missing, ", "))
	}
}
