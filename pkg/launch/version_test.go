package launch_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestRun_Version_ReadsNoSetting: --version (and -version, version) prints funcgraph's
// version and the Go version and returns nil, without reading a setting (not even the one
// that would make it a custom handler) or building the app.
func TestRun_Version_ReadsNoSetting(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		t.Run(arg, func(t *testing.T) {
			var read []string
			getenv := func(k string) string {
				read = append(read, k)
				return map[string]string{"FUNCTIONS_CUSTOMHANDLER_PORT": "7000"}[k]
			}
			build := func(context.Context, launch.Settings) (*launch.App, error) {
				t.Error("the app was built")
				return nil, nil
			}
			var out bytes.Buffer
			if err := launch.Run(t.Context(), build, launch.Options{Args: []string{arg}, Getenv: getenv, Logger: discard(), Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			if lines[0] != "funcgraph "+launch.Version || len(lines) < 2 || !strings.HasPrefix(lines[1], "go: "+runtime.Version()+" ") {
				t.Errorf("printed:\n%s", out.String())
			}
			if len(read) > 0 {
				t.Errorf("read the settings %v", read)
			}
		})
	}
}

// `--version` prints funcgraph's version first, then the Go version and the binary's own
// module and revision, without reading a setting or building the app.
func ExampleRun_version() {
	var out strings.Builder
	err := launch.Run(context.Background(), nil, launch.Options{Args: []string{"--version"}, Stdout: &out})
	first, _, _ := strings.Cut(out.String(), "\n")
	fmt.Println(first, err)
	// Output: funcgraph 0.4.0 <nil>
}
