// Command funcgraph is the example funcgraph app. Under the Azure Functions host (when
// FUNCTIONS_CUSTOMHANDLER_PORT is set) it runs as a custom handler; otherwise it takes a
// subcommand:
//
//	funcgraph serve [--addr 127.0.0.1:7071]   serve the routes directly, with key checks
//	funcgraph functions [--out functions]     write the function.json folders
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchost"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], logger); err != nil {
		logger.Error("funcgraph stopped", "error", err)
		os.Exit(1)
	}
}

func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv("FUNCGRAPH_LOG_LEVEL"))); err != nil {
		return slog.LevelInfo
	}
	return l
}

func run(ctx context.Context, args []string, logger *slog.Logger) error {
	if port := os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT"); port != "" {
		return serveCustomHandler(ctx, port, logger)
	}
	if len(args) == 0 {
		return errors.New("usage: funcgraph serve [--addr host:port] | funcgraph functions [--out dir]")
	}
	switch args[0] {
	case "serve":
		return serveStandalone(ctx, args[1:], logger)
	case "functions":
		return writeFunctions(args[1:])
	default:
		return fmt.Errorf("unknown subcommand %q (want serve or functions)", args[0])
	}
}

func buildApp(logger *slog.Logger) (*funchost.FunctionApp, error) {
	return exampleapp.Build(exampleapp.Config{Logger: logger})
}

func serveCustomHandler(ctx context.Context, port string, logger *slog.Logger) error {
	app, err := buildApp(logger)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	return funchost.Serve(ctx, addr, app.CustomHandler(funchost.HandlerOptions{Logger: logger}), logger, func(a net.Addr) {
		logger.Info("custom handler listening", "addr", a.String())
	})
}

func serveStandalone(ctx context.Context, args []string, logger *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7071", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	keys, err := loadKeys()
	if err != nil {
		return err
	}
	if keys.Empty() {
		logger.Warn("no function keys configured: function-level routes answer 401; set FUNCGRAPH_FUNCTION_KEY (and FUNCGRAPH_MASTER_KEY) or FUNCGRAPH_KEYS_FILE")
	}
	app, err := buildApp(logger)
	if err != nil {
		return err
	}
	h := app.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger})
	return funchost.Serve(ctx, *addr, h, logger, func(a net.Addr) {
		logger.Info("standalone server listening", "url", "http://"+a.String()+"/"+app.RoutePrefix())
	})
}

// loadKeys reads the standalone server's keys: FUNCGRAPH_KEYS_FILE, plus FUNCGRAPH_FUNCTION_KEY
// (a host-level function key) and FUNCGRAPH_MASTER_KEY.
func loadKeys() (funchost.Keys, error) {
	var keys funchost.Keys
	if path := os.Getenv("FUNCGRAPH_KEYS_FILE"); path != "" {
		k, err := funchost.LoadKeysFile(path)
		if err != nil {
			return keys, err
		}
		keys = k
	}
	if v := os.Getenv("FUNCGRAPH_FUNCTION_KEY"); v != "" {
		if keys.HostFunction == nil {
			keys.HostFunction = map[string]string{}
		}
		keys.HostFunction["default"] = v
	}
	if v := os.Getenv("FUNCGRAPH_MASTER_KEY"); v != "" {
		keys.Master = v
	}
	return keys, nil
}

func writeFunctions(args []string) error {
	fs := flag.NewFlagSet("functions", flag.ContinueOnError)
	out := fs.String("out", "functions", "output folder")
	if err := fs.Parse(args); err != nil {
		return err
	}
	app, err := buildApp(slog.Default())
	if err != nil {
		return err
	}
	return app.WriteFunctions(*out)
}
