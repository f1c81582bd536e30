package launch_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
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

type order struct {
	Item string `json:"item"`
	Done bool   `json:"done"`
}

// HostApp serves hosted graphs and durable graphs together: the engine runs on Azure Storage
// when AzureWebJobsStorage is set (memory otherwise), and the worker functions are registered
// so the same binary runs under the Functions host.
func ExampleHostApp() {
	build := func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger})
		if err != nil {
			return nil, err
		}
		b := durable.NewManifestBuilder[order]("orders")
		b.SetEntrypoint("ship")
		_ = b.AddStep("ship", func(_ context.Context, o order) (order, error) { o.Done = true; return o, nil }, durable.Terminal())
		g, err := b.Build()
		if err != nil {
			return nil, err
		}
		return launch.HostApp(s, h, launch.DurableOptions{}, g)
	}
	a, err := build(context.Background(), launch.Settings{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(a.FunctionApp.QueueFunctions()), "queue trigger,", len(a.FunctionApp.TimerFunctions()), "timer trigger")
	// Output: 1 queue trigger, 1 timer trigger
}
