package version

import (
	"regexp"
	"testing"
)

// TestVersion_IsSemanticVersion: the version is MAJOR.MINOR.PATCH with an optional
// pre-release, without a leading "v", as the health details and --version show it.
func TestVersion_IsSemanticVersion(t *testing.T) {
	semver := regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	if !semver.MatchString(Version) {
		t.Fatalf("Version = %q, want MAJOR.MINOR.PATCH[-pre-release]", Version)
	}
}
