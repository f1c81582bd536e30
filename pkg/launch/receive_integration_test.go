//go:build integration

package launch_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationFromEnv_ReceiveOnStartUnderTheHost: on Azure Storage under the Functions host
// (no embedded dispatcher) a start receives its first work item itself unless
// FUNCGRAPH_RECEIVE_ON_START=off; serve, whose dispatcher a start wakes, never does; a value
// other than on or off fails startup.
func TestIntegrationFromEnv_ReceiveOnStartUnderTheHost(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	for name, tc := range map[string]struct {
		mode    launch.Mode
		setting string
		want    bool
		err     string
	}{
		"host":                  {launch.ModeCustomHandler, "", true, ""},
		"host, on":              {launch.ModeCustomHandler, "on", true, ""},
		"host, off":             {launch.ModeCustomHandler, "off", false, ""},
		"host, junk":            {launch.ModeCustomHandler, "yes", false, "FUNCGRAPH_RECEIVE_ON_START"},
		"serve, its dispatcher": {launch.ModeServe, "on", false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			prefix := azuritetest.UniqueName("r")
			s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
				launch.EnvStorage: conn, launch.EnvStoragePrefix: prefix, "FUNCGRAPH_WORK_QUEUE": prefix + "-work",
				"FUNCTIONS_CUSTOMHANDLER_PORT": "7777", "FUNCGRAPH_RECEIVE_ON_START": tc.setting,
			}), tc.mode, discard())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("FromEnv: %v, want an error naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			defer func() { _ = s.Close() }()
			if s.Durable.ReceiveOnStart != tc.want {
				t.Errorf("ReceiveOnStart = %v, want %v", s.Durable.ReceiveOnStart, tc.want)
			}
			if got := s.Durable.EngineOptions(engine.Options{}).ReceiveOnStart; got != tc.want {
				t.Errorf("EngineOptions().ReceiveOnStart = %v, want %v", got, tc.want)
			}
		})
	}
}
