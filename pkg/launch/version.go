package launch

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/internal/version"
)

// Version is the version of funcgraph: `<binary> --version` prints it, and GET
// /api/health/details reports it as funcgraph_version.
const Version = version.Version

// isVersionArg reports whether arg asks for the version: --version, -version or version.
func isVersionArg(arg string) bool {
	return arg == "--version" || arg == "-version" || arg == "version"
}

// versionText is what `--version` prints: funcgraph's version, the Go toolchain and platform,
// and, when the binary carries build information, its main module (the user's app) with its
// version and the VCS revision it was built from.
func versionText(info *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "funcgraph %s\n", Version)
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if !ok || info == nil || info.Main.Path == "" {
		return b.String()
	}
	fmt.Fprintf(&b, "app: %s", info.Main.Path)
	if v := info.Main.Version; v != "" && v != "(devel)" {
		fmt.Fprintf(&b, " %s", v)
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		fmt.Fprintf(&b, " (revision %s", revision)
		if modified == "true" {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	b.WriteString("\n")
	return b.String()
}
