package runsapi_test

import (
	"bytes"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"log/slog"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

func TestMount_WithoutAuthLevel_InheritsTheHostingApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		hostAuth funchost.AuthLevel
		svcAuth  funchost.AuthLevel
		want     string
		warns    bool
	}{
		{"host default is function", "", "", "function", false},
		{"host admin", funchost.AuthAdmin, "", "admin", false},
		{"explicit service level wins", "", funchost.AuthAdmin, "admin", false},
		{"explicit anonymous warns", "", funchost.AuthAnonymous, "anonymous", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			h, err := host.New(host.Options{AuthLevel: tt.hostAuth, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			reg := runsapitest.Registry(t, examples.All)
			eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
			if err != nil {
				t.Fatal(err)
			}
			svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: tt.svcAuth, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			if err := runsapi.Mount(svc, h, runsapi.MountOptions{}); err != nil {
				t.Fatal(err)
			}
			for name, got := range runsapitest.AuthLevels(t, h.FunctionApp()) {
				if got != tt.want {
					t.Errorf("%s authLevel %q, want %q", name, got, tt.want)
				}
			}
			if warned := strings.Contains(logs.String(), runsapi.AnonymousWarning); warned != tt.warns {
				t.Errorf("warned %v, want %v; logs:\n%s", warned, tt.warns, logs.String())
			}
		})
	}
}
