// Command sdkserver serves the example app standalone for the LangGraph SDK tests, with the
// platform threads on Azure Table storage and echo_agent's checkpoints on Azure Blob storage
// when AzureWebJobsStorage holds a connection string (the handler binary does not select
// those stores yet). Usage: sdkserver serve --addr host:port.
// Keys come from FUNCGRAPH_FUNCTION_KEY. Test tooling only.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/funcgraph/funcgraph/pkg/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/tablethreads"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], logger); err != nil {
		logger.Error("sdkserver stopped", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, logger *slog.Logger) error {
	if len(args) == 0 || args[0] != "serve" {
		return errors.New("usage: sdkserver serve --addr host:port")
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7071", "listen address")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg := exampleapp.Config{Logger: logger}
	if conn := os.Getenv("AzureWebJobsStorage"); conn != "" {
		store, err := tablethreads.Open(ctx, conn, tablethreads.Options{Logger: logger})
		if err != nil {
			return err
		}
		cfg.PlatformThreads = store
		saver, err := blobcheckpoint.Open(ctx, conn, blobcheckpoint.Options{Logger: logger})
		if err != nil {
			return err
		}
		cfg.Checkpointer = saver
	}
	app, err := exampleapp.Build(cfg)
	if err != nil {
		return err
	}
	keys := funchost.Keys{HostFunction: map[string]string{"default": os.Getenv("FUNCGRAPH_FUNCTION_KEY")}}
	if err := app.Start(ctx); err != nil {
		return errors.Join(err, app.Close())
	}
	h := app.FunctionApp.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger})
	err = funchost.Serve(ctx, *addr, h, logger, func(net.Addr) {})
	return errors.Join(err, app.Close())
}
