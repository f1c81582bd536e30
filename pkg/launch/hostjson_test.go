package launch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

func TestSetExecutablePath(t *testing.T) {
	repoHost, err := os.ReadFile(filepath.Join("..", "..", "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := launch.SetExecutablePath(repoHost, "myapp")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(repoHost), `"defaultExecutablePath": "funcgraph"`, `"defaultExecutablePath": "myapp"`, 1)
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	tests := []struct {
		name, in, exe string
		wantErr       error
	}{
		{"no custom handler", `{"version":"2.0"}`, "x", launch.ErrNoExecutablePath},
		{"not json", `{`, "x", nil},
		{"path in name", string(repoHost), "bin/x", nil},
		{"empty name", string(repoHost), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := launch.SetExecutablePath([]byte(tc.in), tc.exe)
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("err = %v, want an error (%v)", err, tc.wantErr)
			}
		})
	}
}

func TestRun_HostJSONSubcommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "host.json")
	if err := os.WriteFile(in, []byte(`{"customHandler":{"description":{"defaultExecutablePath":"old"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	err := launch.Run(t.Context(), nil, launch.Options{Args: []string{"hostjson", "--in", in, "--out", out}, Getenv: envOf(nil), Logger: discard(), Program: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if string(b) != `{"customHandler":{"description":{"defaultExecutablePath":"tiny"}}}` {
		t.Fatalf("out = %s", b)
	}
}
