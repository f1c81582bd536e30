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

// env is a process environment for the examples.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Run is Main without the process: tests and wrappers pass the arguments, environment and
// logger. Here `functions --out <dir>` writes one function.json folder per function.
func ExampleRun() {
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
	dir, err := os.MkdirTemp("", "functions")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	err = launch.Run(context.Background(), build, launch.Options{
		Args:   []string{"functions", "--out", dir},
		Getenv: env(nil),
		Logger: slog.New(slog.DiscardHandler),
	})
	fmt.Println(err)
	written, _ := filepath.Glob(filepath.Join(dir, "*", "function.json"))
	for _, f := range written {
		fmt.Println(filepath.Base(filepath.Dir(f)))
	}
	// Output:
	// <nil>
	// fg_echo_invoke
	// fg_echo_stream
	// fg_health
	// fg_health_details
	// fg_openapi
}

// FromEnv is the one reader of the environment. Without AzureWebJobsStorage the durable engine
// runs on the in-memory twins; the storage prefix names its table and queue either way.
func ExampleFromEnv() {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	s, err := launch.FromEnv(ctx, env(map[string]string{launch.EnvStoragePrefix: "shop"}), launch.ModeServe, quiet)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Names.RunsTable, s.Names.WorkQueue, s.Durable.Azure, s.Durable.EmbeddedDispatcher, s.ThreadLock == nil)

	_, err = launch.FromEnv(ctx, env(map[string]string{"GRAPH_LOCK_BACKEND": "distributed"}), launch.ModeServe, quiet)
	fmt.Println(err)
	// Output:
	// shopruns shop-work false true true
	// GRAPH_LOCK_BACKEND=distributed needs the AzureWebJobsStorage connection string (a storage account or UseDevelopmentStorage=true for Azurite); set it or unset GRAPH_LOCK_BACKEND
}
