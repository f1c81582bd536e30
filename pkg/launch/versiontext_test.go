package launch

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestVersionText_TheUsersBinary: past funcgraph's version and the Go version, --version
// names the binary's main module, its version unless it is the "(devel)" of a plain build,
// and the VCS revision it was built from, when the build recorded them.
func TestVersionText_TheUsersBinary(t *testing.T) {
	head := "funcgraph " + Version + "\ngo: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "true"}}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build information", nil, false, head},
		{"a tagged module", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.2.3"}}, true,
			head + "app: example.com/app v1.2.3\n"},
		{"a checkout with changes", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"}, Settings: rev}, true,
			head + "app: example.com/app (revision 0123abc, modified)\n"},
		{"a clean checkout", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.2.4-0.20250101000000-0123abc"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "false"}}}, true,
			head + "app: example.com/app v1.2.4-0.20250101000000-0123abc (revision 0123abc)\n"},
		{"a test binary", &debug.BuildInfo{}, true, head},
	} {
		if got := versionText(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}
