package launch_test

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// A user's main: build the app from the settings, and Main does the rest (custom handler
// under the Functions host, `serve`, `functions`, `hostjson`, keys, signals).
func ExampleMain() {
	build := func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock})
		if err != nil {
			return nil, err
		}
		if err := h.Register(greeter{}, "greeter", host.RegisterOptions{}); err != nil {
			return nil, err
		}
		return &launch.App{FunctionApp: h.FunctionApp()}, nil
	}
	_ = build // in main: launch.Main(build)
}
