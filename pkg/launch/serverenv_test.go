package launch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

func TestServerConfigFromEnv(t *testing.T) {
	c, err := launch.ServerConfigFromEnv(envOf(map[string]string{
		"FUNCGRAPH_READ_HEADER_TIMEOUT": "5s", "FUNCGRAPH_IDLE_TIMEOUT": "2m", "FUNCGRAPH_MAX_HEADER_BYTES": "32768", "FUNCGRAPH_DRAIN_BODY_BYTES": "0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReadHeaderTimeout != 5*time.Second || c.IdleTimeout != 2*time.Minute || c.MaxHeaderBytes != 32768 {
		t.Fatalf("config = %+v", c)
	}
	for name, env := range map[string]map[string]string{
		"bad duration":      {"FUNCGRAPH_BODY_READ_TIMEOUT": "soon"},
		"negative duration": {"FUNCGRAPH_SHUTDOWN_TIMEOUT": "-1s"},
		"bad size":          {"FUNCGRAPH_MAX_HEADER_BYTES": "big"},
		"bad drain":         {"FUNCGRAPH_DRAIN_BODY_BYTES": "-5"},
	} {
		if _, err := launch.ServerConfigFromEnv(envOf(env)); err == nil || !strings.Contains(err.Error(), "FUNCGRAPH_") {
			t.Errorf("%s: err = %v, want one naming the setting", name, err)
		}
	}
}

// TestRun_BadBodyLimit_FailsBeforeServing: a malformed FUNCTIONS_REQUEST_BODY_SIZE_LIMIT stops
// serve with an error naming the setting.
func TestRun_BadBodyLimit_FailsBeforeServing(t *testing.T) {
	var started bool
	var closed int
	err := launch.Run(t.Context(), tinyApp(&started, &closed), launch.Options{
		Args: []string{"serve", "--addr", "127.0.0.1:0"}, Getenv: envOf(map[string]string{"FUNCTIONS_REQUEST_BODY_SIZE_LIMIT": "lots"}), Logger: discard(),
	})
	if err == nil || !strings.Contains(err.Error(), "FUNCTIONS_REQUEST_BODY_SIZE_LIMIT") {
		t.Fatalf("err = %v, want one naming %s", err, "FUNCTIONS_REQUEST_BODY_SIZE_LIMIT")
	}
	if started {
		t.Error("the app started despite the bad setting")
	}
}
