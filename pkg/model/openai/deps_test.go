//go:build integration

// The tests of this file take seconds, but are integration tests for what they need: a
// module cache that holds what `go mod tidy` of this module downloads (make test's
// tidy-check runs it first), since they run the go command offline from it. Their names
// start with TestIntegration, as make integration runs only those.

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
// and package message but no adapter.
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

// vendorSDKs are the module paths of the adapters' SDKs.
var vendorSDKs = []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}

// TestIntegrationApp_WithoutAdapter_FetchesNoSDK runs `go mod tidy`, `go build` and `go list -deps` on an
// app that imports no adapter, in a fresh, empty module cache fed from this machine's cache
// as a file:// proxy, and checks that Go fetched nothing of a vendor SDK (no zip, no
// extracted tree, not even its go.mod or .info: with module graph pruning, a go 1.17+
// module's requirements are read from its own go.mod, funcgraph's, so Go needs no go.mod of
// a module none of the app's packages comes from) and compiled none of it. It logs what Go
// fetched.
func TestIntegrationApp_WithoutAdapter_FetchesNoSDK(t *testing.T) {
	t.Parallel()
	dir, cache := newApp(t, appWithoutAdapter)
	appGo(t, dir, cache, "mod", "tidy")
	appGo(t, dir, cache, "build", "-o", filepath.Join(t.TempDir(), "app"), ".")
	deps := appGo(t, dir, cache, "list", "-deps", ".")
	fetched := cached(t, cache)
	for _, sdk := range vendorSDKs {
		if strings.Contains(deps, sdk) {
			t.Errorf("the app's packages include %s:\n%s", sdk, deps)
		}
		for _, f := range fetched {
			if strings.HasPrefix(f, sdk) {
				t.Errorf("%s fetched: %s", sdk, f)
			}
		}
	}
	t.Logf("Go fetched into the fresh module cache:\n%s", strings.Join(fetched, "\n"))
}

// TestIntegrationApp_OnLaunch_FetchesNoSDK is the same check for the app a user writes: the user-module
// fixture of package launch (a hosted and a durable graph handed to launch.Main), listed
// rather than built. `go mod tidy` loads the tests of every package the app imports, and the
// packages those tests import: a test of a package under launch that imports a package on an
// adapter has tidy download that adapter's SDK, which the error names (go mod why).
func TestIntegrationApp_OnLaunch_FetchesNoSDK(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(filepath.Join("..", "..", "launch", "testdata", "usermod", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir, cache := newApp(t, string(text))
	appGo(t, dir, cache, "mod", "tidy")
	deps := appGo(t, dir, cache, "list", "-deps", ".")
	fetched := cached(t, cache)
	for _, sdk := range vendorSDKs {
		if strings.Contains(deps, sdk) {
			t.Errorf("the app's packages include %s:\n%s", sdk, deps)
		}
		if i := slices.IndexFunc(fetched, func(f string) bool { return strings.HasPrefix(f, sdk) }); i >= 0 {
			mod := strings.SplitN(fetched[i], "/@v/", 2)[0]
			mod, _, _ = strings.Cut(mod, "@")
			t.Errorf("%s fetched (%s), by go mod tidy: %s", sdk, fetched[i], appGo(t, dir, cache, "mod", "why", "-m", mod))
		}
	}
}

// TestIntegrationApp_WithAdapter_FetchesTheSDK is the control: the same check sees openai-go fetched
// and extracted for an app on the adapter. It lists the app's packages rather than build
// them: compiling the SDK from a new module cache (a new source path, so no build cache)
// takes minutes.
func TestIntegrationApp_WithAdapter_FetchesTheSDK(t *testing.T) {
	t.Parallel()
	dir, cache := newApp(t, appWithAdapter)
	appGo(t, dir, cache, "mod", "tidy")
	deps := appGo(t, dir, cache, "list", "-deps", ".")
	if !strings.Contains(deps, "github.com/openai/openai-go/v3\n") {
		t.Errorf("the app's packages lack openai-go:\n%s", deps)
	}
	fetched := cached(t, cache)
	if !slices.Contains(fetched, "github.com/openai/openai-go/v3/@v/v3.98.0.zip") ||
		!slices.Contains(fetched, "github.com/openai/openai-go/v3@v3.98.0/") {
		t.Errorf("openai-go not fetched or not extracted; fetched:\n%s", strings.Join(fetched, "\n"))
	}
}

// newApp writes main.go of text in a module of its own that requires this repository through
// a replace, and returns its folder and a fresh, empty module cache for it.
func newApp(t *testing.T, text string) (dir, cache string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir, cache = t.TempDir(), t.TempDir()
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
	return dir, cache
}

// appGo runs the go command in the app's folder with cache as its module cache, fed offline
// from this machine's module cache (GOPROXY=file://…/cache/download), and returns its output.
func appGo(t *testing.T, dir, cache string, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := "file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(out)), "cache", "download"))
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMODCACHE="+cache, "GOPROXY="+proxy, "GOFLAGS=-mod=mod -modcacherw -buildvcs=false",
		"GOSUMDB=off", "GONOSUMDB=*", "GOWORK=off", "GOTOOLCHAIN=local")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

// cached returns what landed in the module cache, slash-separated: every file Go downloaded
// (cache/download/…: list, .info, .mod, .zip, …), and every module tree it extracted
// (module@version/).
func cached(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	download := filepath.Join(cache, "cache", "download")
	err := filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, ok := strings.CutPrefix(path, download+string(filepath.Separator)); ok {
			if !d.IsDir() {
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		}
		if d.IsDir() && strings.Contains(d.Name(), "@") {
			rel, _ := filepath.Rel(cache, path)
			out = append(out, filepath.ToSlash(rel)+"/")
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
