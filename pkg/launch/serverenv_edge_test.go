package launch_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// FUNCGRAPH_ALLOWED_ORIGINS is a comma-separated list of browser origins; one that is not an
// origin stops the binary with an error naming the setting.
func TestServerConfigFromEnv_AllowedOrigins(t *testing.T) {
	c, err := launch.ServerConfigFromEnv(envOf(map[string]string{"FUNCGRAPH_ALLOWED_ORIGINS": " https://app.example, http://localhost:3000 ,"}))
	if err != nil || !slices.Equal(c.AllowedOrigins, []string{"https://app.example", "http://localhost:3000"}) {
		t.Fatalf("config = %q, %v", c.AllowedOrigins, err)
	}
	for _, v := range []string{"*", "app.example", "https://app.example/ui"} {
		if _, err := launch.ServerConfigFromEnv(envOf(map[string]string{"FUNCGRAPH_ALLOWED_ORIGINS": v})); err == nil || !strings.Contains(err.Error(), "FUNCGRAPH_ALLOWED_ORIGINS") {
			t.Errorf("%q: err = %v, want one naming the setting", v, err)
		}
	}
}

func TestServerConfigFromEnv_WriteStallTimeout(t *testing.T) {
	c, err := launch.ServerConfigFromEnv(envOf(map[string]string{"FUNCGRAPH_WRITE_STALL_TIMEOUT": "45s"}))
	if err != nil || c.WriteStallTimeout != 45*time.Second {
		t.Fatalf("WriteStallTimeout = %s, %v", c.WriteStallTimeout, err)
	}
	for _, v := range []string{"soon", "0s", "-1s"} {
		if _, err := launch.ServerConfigFromEnv(envOf(map[string]string{"FUNCGRAPH_WRITE_STALL_TIMEOUT": v})); err == nil || !strings.Contains(err.Error(), "FUNCGRAPH_WRITE_STALL_TIMEOUT") {
			t.Errorf("%q: err = %v, want one naming the setting", v, err)
		}
	}
}
