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
	"net/http"
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
	if err := run(ctx, os.Args[1:], os.Getenv, logger); err != nil {
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

func run(ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger) error {
	if port := getenv("FUNCTIONS_CUSTOMHANDLER_PORT"); port != "" {
		return serve(ctx, net.JoinHostPort("127.0.0.1", port), getenv, logger, func(app *exampleapp.App) (http.Handler, error) {
			return app.FunctionApp.CustomHandler(funchost.HandlerOptions{Logger: logger}), nil
		})
	}
	if len(args) == 0 {
		return errors.New("usage: funcgraph serve [--addr host:port] | funcgraph functions [--out dir]")
	}
	switch args[0] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:7071", "listen address")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return serve(ctx, *addr, getenv, logger, func(app *exampleapp.App) (http.Handler, error) {
			keys, err := loadKeys(getenv)
			if err != nil {
				return nil, err
			}
			if keys.Empty() {
				logger.Warn("no function keys configured: function-level routes answer 401; set " +
					envFunctionKey + " (and " + envMasterKey + ") or " + envKeysFile)
			}
			return app.FunctionApp.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger}), nil
		})
	case "functions":
		fs := flag.NewFlagSet("functions", flag.ContinueOnError)
		out := fs.String("out", "functions", "output folder")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		app, err := exampleapp.Build(exampleapp.Config{Logger: logger})
		if err != nil {
			return err
		}
		return app.FunctionApp.WriteFunctions(*out)
	default:
		return fmt.Errorf("unknown subcommand %q (want serve or functions)", args[0])
	}
}

// serve builds the app, starts its background work, and serves handler(app) on addr until ctx
// ends; then the server drains and the app closes.
func serve(ctx context.Context, addr string, getenv func(string) string, logger *slog.Logger, handler func(*exampleapp.App) (http.Handler, error)) error {
	app, err := buildApp(ctx, getenv, logger)
	if err != nil {
		return err
	}
	h, err := handler(app)
	if err != nil {
		return errors.Join(err, app.Close())
	}
	if err := app.Start(ctx); err != nil {
		return errors.Join(err, app.Close())
	}
	err = funchost.Serve(ctx, addr, h, logger, func(a net.Addr) {
		logger.Info("listening", "addr", a.String(), "api", "http://"+a.String()+"/"+app.FunctionApp.RoutePrefix())
	})
	return errors.Join(err, app.Close())
}
