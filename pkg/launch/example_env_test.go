package launch_test

import (
	"context"
	"errors"
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

	_, err = launch.FromEnv(ctx, env(map[string]string{launch.EnvLockBackend: "distributed"}), launch.ModeServe, quiet)
	fmt.Println(errors.Is(err, launch.ErrDistributedNeedsStorage))
	// Output:
	// shopruns shop-work false true true
	// true
}

// NewLogger honours FUNCGRAPH_LOG_LEVEL.
func ExampleNewLogger() {
	logger := launch.NewLogger(os.Stderr, env(map[string]string{launch.EnvLogLevel: "warn"}))
	ctx := context.Background()
	fmt.Println(logger.Enabled(ctx, slog.LevelInfo), logger.Enabled(ctx, slog.LevelWarn))
	// Output: false true
}

// ServerConfigFromEnv reads the server's timeouts and limits; an unset setting stays zero,
// which funchost.NewServer reads as its default, and a malformed one is an error at startup.
func ExampleServerConfigFromEnv() {
	cfg, err := launch.ServerConfigFromEnv(env(map[string]string{launch.EnvReadHeaderTimeout: "5s"}))
	fmt.Println(cfg.ReadHeaderTimeout, cfg.IdleTimeout, err)

	_, err = launch.ServerConfigFromEnv(env(map[string]string{launch.EnvIdleTimeout: "soon"}))
	fmt.Println(err != nil)
	// Output:
	// 5s 0s <nil>
	// true
}

// NamesFor derives every storage name from one prefix (FUNCGRAPH_STORAGE_PREFIX).
func ExampleNamesFor() {
	n, err := launch.NamesFor("shop")
	fmt.Println(n.RunsTable, n.WorkQueue, n.PayloadContainer, n.ThreadsTable, n.CheckpointContainer, err)
	// Output: shopruns shop-work shop-payloads shopthreads shop-checkpoints <nil>
}

// LoadKeys gathers the standalone server's keys from the environment.
func ExampleLoadKeys() {
	keys, err := launch.LoadKeys(env(map[string]string{launch.EnvFunctionKey: "fk", launch.EnvMasterKey: "mk"}))
	fmt.Println(keys.HostFunction["default"], keys.Master, err)
	// Output: fk mk <nil>
}
