//go:build integration

package openai_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// appWithoutAdapter is a user's app, in its own module, that uses package model (a Script)
// and package message but not this adapter.
const appWithoutAdapter = `package main

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

func main() {
	resp, err := model.NewScript(message.AI("hi")).Generate(context.Background(), model.Request{})
	fmt.Println(resp.Message.Text(), err)
}
`

// appWithAdapter is the control: the same app on this adapter.
const appWithAdapter = `package main

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/openai"
)

func main() {
	var m model.Model
	m, err := openai.New(openai.Config{APIKey: "k", Model: "m"})
	fmt.Println(m != nil, err)
}
`

// TestApp_WithoutAdapter_FetchesNoSDK builds an app that does not import this package in a
// fresh, empty module cache, fed from this machine's cache as a file:// proxy, and checks
// that Go neither downloaded openai-go's source (zip, extracted tree) nor compiled it. It
// logs every file Go fetched. The control, the same app on the adapter, fetches the SDK.
func TestApp_WithoutAdapter_FetchesNoSDK(t *testing.T) {
	t.Parallel()
	deps, fetched := buildApp(t, appWithoutAdapter, true)
	if strings.Contains(deps, "github.com/openai/") {
		t.Errorf("the app's packages include openai-go:\n%s", deps)
	}
	for _, f := range fetched {
		if strings.Contains(f, "openai") && !strings.HasSuffix(f, ".mod") {
			t.Errorf("openai-go fetched: %s", f)
		}
	}
	t.Logf("Go fetched %d files into the fresh module cache:\n%s", len(fetched), strings.Join(fetched, "\n"))
}

func TestApp_WithAdapter_FetchesTheSDK(t *testing.T) {
	t.Parallel()
	deps, fetched := buildApp(t, appWithAdapter, false) // listed, not compiled: compiling openai-go takes minutes
	if !strings.Contains(deps, "github.com/openai/openai-go/v3\n") {
		t.Errorf("the app's packages lack openai-go:\n%s", deps)
	}
	if !slices.ContainsFunc(fetched, func(f string) bool { return strings.HasPrefix(f, "github.com/openai/openai-go/v3/@v/v3.98.0.zip") }) ||
		!slices.Contains(fetched, filepath.Join("github.com", "openai", "openai-go", "v3@v3.98.0")+string(filepath.Separator)) {
		t.Errorf("openai-go not fetched or not extracted; fetched:\n%s", strings.Join(fetched, "\n"))
	}
}

// buildApp builds (compile) or only lists main.go of text in its own module, requiring this repository through a
// replace, with a fresh module cache fed from this machine's (GOPROXY=file://…, offline).
// It returns `go list -deps` and what landed in the fresh cache: the files downloaded
// (cache/download/…, .mod and .zip) and the module trees extracted (dir + "/").
func buildApp(t *testing.T, text string, compile bool) (deps string, fetched []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := "file://" + filepath.Join(strings.TrimSpace(string(out)), "cache", "download")

	dir, cache := t.TempDir(), t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/app\n\ngo 1.26\n\nrequire github.com/funcgraph/funcgraph v0.0.0\n\n" +
			"replace github.com/funcgraph/funcgraph => " + root + "\n",
		"main.go": text,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOMODCACHE="+cache, "GOPROXY="+proxy, "GOFLAGS=-mod=mod -modcacherw -buildvcs=false",
			"GOSUMDB=off", "GONOSUMDB=*", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if compile {
		run("build", "-o", filepath.Join(t.TempDir(), "app"), ".")
	}
	deps = run("list", "-deps", ".")

	download := filepath.Join("cache", "download") + string(filepath.Separator)
	err = filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(cache, path)
		switch {
		case d.IsDir() && strings.Contains(d.Name(), "@") && !strings.HasPrefix(rel, download):
			fetched = append(fetched, rel+string(filepath.Separator))
			return fs.SkipDir
		case !d.IsDir() && strings.HasPrefix(rel, download) && (strings.HasSuffix(rel, ".zip") || strings.HasSuffix(rel, ".mod")):
			fetched = append(fetched, strings.TrimPrefix(rel, download))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return deps, fetched
}
