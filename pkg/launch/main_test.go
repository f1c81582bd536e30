package launch_test

import (
	"os"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestMain runs the test binary as the staged streaming app (streamApp) when the emulated
// host starts it as a staged folder's custom handler, and as the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(streamAppEnv) != "" {
		launch.Main(streamApp)
		return
	}
	os.Exit(m.Run())
}
