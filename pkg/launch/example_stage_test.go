package launch_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// `stage` writes the folder `func start` runs: the executable, host.json, local.settings.json
// and one folder per function. Here the binary is the running test binary.
func ExampleRun_stage() {
	build := func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger})
		if err != nil {
			return nil, err
		}
		echo := host.InvokeFunc(func(_ context.Context, req host.Request) (any, error) { return req.Input, nil })
		if err := h.Register(echo, "echo", host.RegisterOptions{}); err != nil {
			return nil, err
		}
		return &launch.App{FunctionApp: h.FunctionApp()}, nil
	}
	dir, err := os.MkdirTemp("", "local")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	self, _ := os.Executable()
	err = launch.Run(context.Background(), build, launch.Options{
		Args:   []string{"stage", "--target", "local", "--out", dir, "--exe", "myapp", "--binary", self},
		Getenv: func(string) string { return "" },
		Logger: slog.New(slog.DiscardHandler),
	})
	fmt.Println(err)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "function.json")); err == nil || !e.IsDir() {
			fmt.Println(e.Name())
		}
	}
	// Output:
	// <nil>
	// fg_echo_invoke
	// fg_echo_stream
	// fg_health
	// fg_health_details
	// fg_openapi
	// host.json
	// local.settings.json
	// myapp
}
